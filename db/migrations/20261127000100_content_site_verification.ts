import type { Knex } from 'knex';

/**
 * A content site answers X-Content-Domain only once its client has shown it controls the domain: a
 * DNS TXT record `leadjobs-site-verification=<token>` on it (api/routes/content.ts). Until then any
 * number of clients may register the domain (none blocks the owner); one verified site per domain.
 * Sites registered before this migration were already answering for their domain and stay verified
 * (from their registration), so no public site goes dark on upgrade.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE content_sites ADD COLUMN verification_token text, ADD COLUMN verified_at timestamptz`);
  await knex.raw(
    `UPDATE content_sites SET verification_token = replace(gen_random_uuid()::text, '-', ''), verified_at = created_at`,
  );
  await knex.raw(`ALTER TABLE content_sites ALTER COLUMN verification_token SET NOT NULL`);
  await knex.raw(`ALTER TABLE content_sites DROP CONSTRAINT content_sites_domain_unique`);
  await knex.raw(
    `CREATE UNIQUE INDEX content_sites_verified_domain_uniq ON content_sites (domain) WHERE verified_at IS NOT NULL`,
  );
  await knex.raw(`CREATE UNIQUE INDEX content_sites_client_domain_uniq ON content_sites (client_id, domain)`);
}

export async function down(knex: Knex): Promise<void> {
  // Back to one site per domain: of several registrations, the verified one (else the oldest) stays.
  await knex.raw(`DELETE FROM content_sites s WHERE EXISTS (
    SELECT 1 FROM content_sites o WHERE o.domain = s.domain AND o.id <> s.id
      AND (o.verified_at IS NOT NULL AND s.verified_at IS NULL OR (o.verified_at IS NULL) = (s.verified_at IS NULL) AND (o.created_at, o.id) < (s.created_at, s.id)))`);
  await knex.raw(`DROP INDEX IF EXISTS content_sites_client_domain_uniq`);
  await knex.raw(`DROP INDEX IF EXISTS content_sites_verified_domain_uniq`);
  await knex.raw(`ALTER TABLE content_sites ADD CONSTRAINT content_sites_domain_unique UNIQUE (domain)`);
  await knex.raw(`ALTER TABLE content_sites DROP COLUMN verification_token, DROP COLUMN verified_at`);
}
