import type { Knex } from 'knex';
import { fuzzyKeys } from '../../lib/dedupe-fuzzy';
import type { DedupeRecord } from '../../lib/dedupe';

const BATCH = 5000;

/**
 * Writes every canonical record's fuzzy keys (lib/dedupe-fuzzy.ts fuzzyKeys: key_blocks and
 * key_person) as the application computes them today, in batches of 5,000 (the normalisation is the
 * application's, not SQL's). For the migrations that introduce or change the keys; not a migration
 * itself (db/migrations/index.ts lists those).
 */
export async function writeFuzzyKeys(knex: Knex): Promise<void> {
  for (let last = 0; ;) {
    const { rows } = (await knex.raw('SELECT id, data FROM canonical_records WHERE id > ? ORDER BY id LIMIT ?', [
      last,
      BATCH,
    ])) as { rows: { id: string; data: DedupeRecord }[] };
    if (rows.length === 0) break;
    const keys = rows
      .map((r) => {
        const k = fuzzyKeys(r.data);
        return { id: r.id, blocks: k.blocks.length > 0 ? k.blocks : null, person: k.person };
      })
      .filter((k) => k.blocks !== null || k.person !== null);
    if (keys.length > 0) {
      await knex.raw(
        `UPDATE canonical_records c SET key_blocks = x.blocks, key_person = x.person
         FROM jsonb_to_recordset(?::jsonb) AS x(id bigint, blocks text[], person text)
         WHERE c.id = x.id AND (c.key_blocks IS DISTINCT FROM x.blocks OR c.key_person IS DISTINCT FROM x.person)`,
        [JSON.stringify(keys)],
      );
    }
    last = Number(rows[rows.length - 1]?.id);
  }
}
