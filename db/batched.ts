import { escapeLiteral } from 'pg';
import type { Knex } from 'knex';

/** A value that inline() writes as an SQL literal. */
export type SqlValue = string | number | boolean | Date | null;

/**
 * `sql` with each `$n` replaced by the n-th value as an escaped literal (pg's escapeLiteral, as
 * libpq's PQescapeLiteral), for statements sent several at once in the simple query protocol,
 * which takes no parameters. Casts stay in the text (`$3::jsonb`).
 */
export function inline(sql: string, values: SqlValue[]): string {
  return sql.replace(/\$(\d+)/g, (_, n: string) => {
    const i = Number(n) - 1;
    if (i < 0 || i >= values.length) throw new Error(`inline: no value for $${n}`);
    return literal(values[i] as SqlValue);
  });
}

function literal(value: SqlValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`inline: ${value} is not a finite number`);
    return String(value);
  }
  const text = value instanceof Date ? value.toISOString() : value;
  // The simple protocol's query text is a C string: a NUL would cut the statement short.
  if (text.includes('\0')) throw new Error('inline: a string with a NUL character');
  return escapeLiteral(text);
}

/**
 * A statement Postgres parses and plans once per connection (PREPARE), then runs with EXECUTE:
 * `text` takes `$n` parameters, as in inline().
 */
export interface PreparedStatement {
  name: string;
  text: string;
}

export function prepared(name: string, text: string): PreparedStatement {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`prepared: ${name} is not a plain lower-case name`);
  return { name, text };
}

/** A statement of a batch: SQL text, or a prepared statement with its values. */
export type BatchStatement = string | { statement: PreparedStatement; values: SqlValue[] };

interface Result {
  rows: Record<string, unknown>[];
}

interface RawConnection {
  query(text: string): Promise<Result | Result[]>;
  __knex__disposed?: unknown;
}

// The statements each pooled connection has prepared (a connection's session keeps them).
const preparedOn = new WeakMap<RawConnection, Set<string>>();

/**
 * `statements` as batch text. A statement the connection has not prepared yet is prepared first,
 * in a round trip of its own (once per connection), and counted as prepared only once that
 * succeeded: PREPARE is not undone by a rollback, and one inside a failed batch might or might
 * not have run.
 */
async function batchText(conn: RawConnection, statements: BatchStatement[]): Promise<string[]> {
  const ready = preparedOn.get(conn) ?? new Set<string>();
  preparedOn.set(conn, ready);
  const out: string[] = [];
  for (const s of statements) {
    if (typeof s === 'string') {
      out.push(s);
      continue;
    }
    const { name, text } = s.statement;
    if (!ready.has(name)) {
      await conn.query(`prepare ${name} as ${text}`);
      ready.add(name);
    }
    out.push(s.values.length ? `execute ${name}(${s.values.map((v) => literal(v)).join(', ')})` : `execute ${name}`);
  }
  return out;
}

/** A transaction whose statements travel in batches: see batchedTransaction. */
export interface BatchedTransaction {
  /**
   * Sends `statements` in one round trip (the first call prefixes BEGIN) and returns each
   * statement's rows, in order.
   */
  run(...statements: BatchStatement[]): Promise<Record<string, unknown>[][]>;
  /** Statements sent with the COMMIT, after it (a NOTIFY, which must not hold the commit's lock). */
  afterCommit(...statements: string[]): void;
}

/**
 * Runs `fn` in a transaction on one of the pool's connections, with BEGIN sent together with the
 * first statements and COMMIT with whatever must follow it: a hot path of three statements then
 * a NOTIFY costs two round trips instead of five. Each statement of a batch still takes its own
 * snapshot (read committed), as separate queries would. If `fn` throws, the transaction is rolled
 * back; a connection that cannot even roll back is dropped from the pool.
 */
export async function batchedTransaction<T>(db: Knex, fn: (trx: BatchedTransaction) => Promise<T>): Promise<T> {
  const conn = (await db.client.acquireConnection()) as RawConnection;
  let begun = false;
  const after: string[] = [];
  const trx: BatchedTransaction = {
    async run(...statements) {
      // A PREPARE the batch needs goes first, in a round trip of its own (on a connection's first batch, before BEGIN).
      const texts = await batchText(conn, statements);
      const text = [...(begun ? [] : ['begin']), ...texts].join(';\n');
      begun = true;
      const result = await conn.query(text);
      const results = Array.isArray(result) ? result : [result];
      return results.slice(results.length - statements.length).map((r) => r.rows);
    },
    afterCommit(...statements) {
      after.push(...statements);
    },
  };
  try {
    const value = await fn(trx);
    if (begun) await conn.query(['commit', ...after].join(';\n'));
    return value;
  } catch (err) {
    if (begun) {
      // Postgres ignores ROLLBACK after the commit itself, so this is safe at any point.
      await conn.query('rollback').catch((rollbackError: unknown) => {
        conn.__knex__disposed = rollbackError;
      });
    }
    throw err;
  } finally {
    await db.client.releaseConnection(conn);
  }
}
