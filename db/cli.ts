/**
 * Operator commands (a composition root: it parses the database config itself).
 *   migrate | rollback
 *   client:create --name <name>        prints exactly one JSON object {client_id, api_key, api_secret}
 *   client:deactivate --client-id <id> | client:activate --client-id <id>
 *   client:rotate --client-id <id> [--grace-hours <h>]
 *                                       prints {client_id, api_key, api_secret, previous_valid_until}: a new key and secret; the
 *                                       old pair stays valid for the grace period (default 24 h, 0 ends it at once; docs/operations.md, Clients)
 *   integrations:reseal                 re-seals LLM credentials, mailbox passwords and webhook secrets (sealing those stored in plaintext) with the current INTEGRATIONS_ENCRYPTION_KEY (docs/api.md "Key rotation");
 *                                       lists the values it cannot open by table and row id and then exits 1
 * Run through npm: `npm run --silent client:create -- --name acme`.
 */
import { parseArgs } from 'node:util';
import { loadDbConfig, loadIntegrationKeys } from '../lib/config';
import { CredentialCipher } from '../lib/llm/cipher';
import { createDb, migrateLatest } from '.';
import { ClientRepository } from './repositories/clients';
import { IntegrationRepository } from './repositories/integrations';
import { MailRepository } from './repositories/mail';
import { WebhookRepository } from './repositories/webhooks';

// A day lets a client roll every deployment over to the new pair; a leaked pair is rotated with 0.
const DEFAULT_ROTATION_GRACE_HOURS = 24;
const MAX_ROTATION_GRACE_HOURS = 24 * 30;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: { name: { type: 'string' }, 'client-id': { type: 'string' }, 'grace-hours': { type: 'string' } },
    strict: true,
  });
  const config = loadDbConfig();
  const db = createDb(config);
  try {
    switch (command) {
      case 'migrate': {
        const applied = await migrateLatest(db, config.DATABASE_SCHEMA);
        process.stderr.write(applied.length ? `applied: ${applied.join(', ')}\n` : 'database is up to date\n');
        return 0;
      }
      case 'rollback': {
        const [, undone] = (await db.migrate.rollback()) as [number, string[]];
        process.stderr.write(`rolled back: ${undone.join(', ') || 'nothing'}\n`);
        return 0;
      }
      case 'client:create': {
        const name = values.name?.trim();
        if (!name) return usage('client:create needs --name <name>');
        await migrateLatest(db, config.DATABASE_SCHEMA);
        const creds = await new ClientRepository(db).create(name);
        process.stdout.write(`${JSON.stringify(creds)}\n`);
        return 0;
      }
      case 'client:deactivate':
      case 'client:activate': {
        const id = values['client-id'];
        if (!id) return usage(`${command} needs --client-id <id>`);
        const found = await new ClientRepository(db).setActive(id, command === 'client:activate');
        if (!found) {
          process.stderr.write(`no client with id ${id}\n`);
          return 1;
        }
        process.stderr.write(`client ${id} ${command === 'client:activate' ? 'activated' : 'deactivated'}\n`);
        return 0;
      }
      case 'client:rotate': {
        const id = values['client-id'];
        if (!id) return usage('client:rotate needs --client-id <id>');
        const graceHours =
          values['grace-hours'] === undefined ? DEFAULT_ROTATION_GRACE_HOURS : Number(values['grace-hours']);
        if (!Number.isFinite(graceHours) || graceHours < 0 || graceHours > MAX_ROTATION_GRACE_HOURS) {
          return usage(`--grace-hours must be a number from 0 to ${MAX_ROTATION_GRACE_HOURS}`);
        }
        await migrateLatest(db, config.DATABASE_SCHEMA);
        const rotated = await new ClientRepository(db).rotate(id, graceHours * 3_600_000);
        if (!rotated) {
          process.stderr.write(`no client with id ${id}\n`);
          return 1;
        }
        process.stdout.write(`${JSON.stringify(rotated)}\n`);
        return 0;
      }
      case 'integrations:reseal': {
        const keys = loadIntegrationKeys();
        const cipher = new CredentialCipher(keys.INTEGRATIONS_ENCRYPTION_KEY, keys.INTEGRATIONS_PREVIOUS_KEYS);
        const credentials = await new IntegrationRepository(db, cipher, config.DATABASE_SCHEMA).reseal();
        const passwords = await new MailRepository(db, cipher).reseal();
        const secrets = await new WebhookRepository(db, config.DATABASE_SCHEMA, cipher).reseal();
        process.stderr.write(
          `re-sealed ${credentials.resealed} credential(s), ${passwords.resealed} mailbox password(s) and ${secrets.resealed} webhook secret(s) with key ${cipher.keyId}\n`,
        );
        const unopenable = [...credentials.unopenable, ...passwords.unopenable, ...secrets.unopenable];
        if (unopenable.length === 0) return 0;
        // Exit 1 so that a script notices before the previous key is removed; the rest is re-sealed all the same.
        process.stderr.write(
          `could not open ${unopenable.length} value(s), left as they were (sealed with a key in neither INTEGRATIONS_ENCRYPTION_KEY nor INTEGRATIONS_PREVIOUS_KEYS, or damaged):\n${unopenable.map((row) => `  ${row}\n`).join('')}`,
        );
        return 1;
      }
      default:
        return usage(`unknown command ${command ?? '(none)'}`);
    }
  } finally {
    await db.destroy();
  }
}

function usage(message: string): number {
  process.stderr.write(
    `${message}\nusage: db/cli.ts migrate|rollback|client:create --name N|client:deactivate --client-id ID|client:activate --client-id ID|client:rotate --client-id ID [--grace-hours H]|integrations:reseal\n`,
  );
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
