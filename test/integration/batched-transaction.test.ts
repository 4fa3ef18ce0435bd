import { Client } from 'pg';
import { createDb, type Db } from '../../db';
import { batchedTransaction, inline, prepared } from '../../db/batched';
import { parseDbConfig } from '../../lib/config';

// db/batched.ts against the real Postgres: the statements job submission sends several at a time.
const config = parseDbConfig({ ...process.env, DATABASE_POOL_MAX: '1' });
const table = `batched_probe_${Date.now().toString(36)}`;
let db: Db;
beforeAll(async () => {
  db = createDb(config);
  await db.raw('create table ?? (id int primary key, note text)', [table]);
});
afterAll(async () => {
  await db.raw('drop table if exists ??', [table]);
  await db.destroy();
});

const notes = async () => (await db(table).orderBy('id').pluck('note')) as string[];

describe('inline', () => {
  test.each([
    ["it's"],
    ["back\\slash \\' and quote"],
    ["'); drop table jobs; --"],
    ['$1 and $2 stay as they are'],
    ['日本語 and emoji 🚀 and \u2028'],
    ['{"a": "b\\"c"}'],
  ])('a string comes back from Postgres exactly as sent: %j', async (value) => {
    const { rows } = (await db.raw(inline('select $1::text as v, $2::int as n', [value, 7]))) as {
      rows: { v: string; n: number }[];
    };
    expect(rows).toEqual([{ v: value, n: 7 }]);
  });

  test('null, booleans, numbers and dates are literals of their type', async () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const { rows } = (await db.raw(
      inline('select $1::int as a, $2 as b, $3 as c, $4::timestamptz as d', [null, true, 1.5, at]),
    )) as { rows: Record<string, unknown>[] };
    expect(rows[0]).toEqual({ a: null, b: true, c: '1.5', d: at });
  });

  test('refuses what it cannot write safely', () => {
    expect(() => inline('select $1', ['a\0b'])).toThrow(/NUL/);
    expect(() => inline('select $1', [Number.NaN])).toThrow(/finite/);
    expect(() => inline('select $2', ['only one'])).toThrow(/no value for \$2/);
  });
});

describe('batchedTransaction', () => {
  test('statements of one batch run in order inside the transaction and commit together', async () => {
    const rows = await batchedTransaction(db, async (trx) => {
      const [inserted, counted] = await trx.run(
        inline(`insert into "${table}" (id, note) values (1, $1) returning id`, ['first']),
        `select count(*)::int as n from "${table}"`,
      );
      return { inserted, counted };
    });
    expect(rows).toEqual({ inserted: [{ id: 1 }], counted: [{ n: 1 }] });
    expect(await notes()).toEqual(['first']);
  });

  test('a throw after the statements rolls them back, and the pooled connection is usable again', async () => {
    await expect(
      batchedTransaction(db, async (trx) => {
        await trx.run(`insert into "${table}" (id, note) values (2, 'rolled back')`);
        throw new Error('workflow start failed');
      }),
    ).rejects.toThrow('workflow start failed');
    expect(await notes()).toEqual(['first']);
    // The pool has one connection: the next transaction gets the same one, not in an aborted state.
    await batchedTransaction(db, async (trx) => {
      await trx.run(`insert into "${table}" (id, note) values (3, 'third')`);
    });
    expect(await notes()).toEqual(['first', 'third']);
  });

  test('a failing statement in a batch rolls the whole batch back', async () => {
    await expect(
      batchedTransaction(db, async (trx) => {
        await trx.run(
          `insert into "${table}" (id, note) values (4, 'fourth')`,
          `insert into "${table}" (id, note) values (1, 'duplicate')`,
        );
      }),
    ).rejects.toMatchObject({ code: '23505' });
    expect(await notes()).toEqual(['first', 'third']);
  });

  test('what is sent after the commit runs only when the commit did, and sees the committed rows', async () => {
    const channel = `${table}_channel`;
    const listener = new Client({ connectionString: config.DATABASE_URL });
    await listener.connect();
    const heard: string[] = [];
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query(`listen "${channel}"`);
    try {
      await expect(
        batchedTransaction(db, async (trx) => {
          await trx.run(`insert into "${table}" (id, note) values (5, 'never')`);
          trx.afterCommit(inline('select pg_notify($1, $2)', [channel, 'rolled back']));
          throw new Error('abandoned');
        }),
      ).rejects.toThrow('abandoned');
      await batchedTransaction(db, async (trx) => {
        await trx.run(`insert into "${table}" (id, note) values (6, 'sixth')`);
        trx.afterCommit(
          inline(`select pg_notify($1, (select string_agg(note, ',' order by id) from "${table}"))`, [channel]),
        );
      });
      for (let i = 0; i < 50 && heard.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
      expect(heard).toEqual(['first,third,sixth']);
    } finally {
      await listener.end();
    }
  });

  test('a prepared statement is prepared once per connection and runs with its values', async () => {
    const insert = prepared(`${table}_insert`, `insert into "${table}" (id, note) values ($1, $2) returning note`);
    const preparedHere = `select count(*)::int as n from pg_prepared_statements where name = '${insert.name}'`;
    // Rolled back: the row goes, the prepared statement stays (PREPARE is not transactional).
    await expect(
      batchedTransaction(db, async (trx) => {
        await trx.run({ statement: insert, values: [7, "seventh's"] });
        throw new Error('abandoned');
      }),
    ).rejects.toThrow('abandoned');
    const results = await batchedTransaction(db, (trx) =>
      trx.run({ statement: insert, values: [8, 'eighth'] }, preparedHere),
    );
    expect(results).toEqual([[{ note: 'eighth' }], [{ n: 1 }]]);
    expect(await notes()).toEqual(['first', 'third', 'sixth', 'eighth']);
  });
});
