import type { Knex } from 'knex';
import { Model, type ModelClass, type QueryBuilder, type QueryBuilderType, type TransactionOrKnex } from 'objection';

/**
 * The one tenancy mechanism: a row owned by a client. Every query on a tenant table starts from
 * `Model.forClient(db, clientId)` (or applies the `forClient` modifier inside a relation or a
 * join), so another client's row is simply not there and another client's id answers 404.
 *
 * A tenant model declares only its table (and, when the table keeps soft-deleted rows, overrides
 * `tenantScope` to hide them); raw SQL names tenant tables through `tenantSql` (below).
 * `test/unit/tenancy.test.ts` fails when db/, api/, activities/ or workers/ filter on `client_id`
 * by hand outside db/models/; the few commented exceptions (a measured hot path in raw SQL, a lookup
 * that must cross tenants such as a verified domain) are listed there with their reason.
 */
export abstract class TenantModel extends Model {
  client_id!: string;

  /**
   * What "belongs to this client" means for the table; subclasses may narrow it further. The filter
   * names the table as the query refers to it (`tableRefFor`), so on an aliased query apply it after
   * `.alias(...)`: applied before, it names the bare table and the SQL fails.
   */
  static tenantScope<M extends Model>(query: QueryBuilder<M>, clientId: string): void {
    query.where(query.tableRefFor(query.modelClass()) + '.client_id', clientId);
  }

  static override modifiers = {
    forClient<M extends Model>(query: QueryBuilder<M>, clientId: string): void {
      (query.modelClass() as unknown as typeof TenantModel).tenantScope(query, clientId);
    },
  };

  /** The client's rows of this table: the only way a repository reads or changes them. */
  static forClient<M extends TenantModel>(
    this: new () => M,
    db: TransactionOrKnex,
    clientId: string,
  ): QueryBuilderType<M> {
    // `this: new () => M` (as Objection types Model.query) lets TypeScript infer the subclass.
    return (this as unknown as ModelClass<M>).query(db).modify('forClient', clientId);
  }
}

/**
 * `{table}` or `{table alias}`: a tenant table in raw SQL. String literals and comments are matched
 * only to be stepped over, so that an array literal such as '{new}' stays what it is and the
 * apostrophe of a comment does not open a literal.
 */
const TENANT_TABLE_REF = /'(?:[^']|'')*'|--[^\n]*|\/\*[\s\S]*?\*\/|\{([a-z_][a-z0-9_]*)(?:\s+([a-z_][a-z0-9_]*))?\}/gi;

/** The bindings knex's raw takes from `sql`: each `?` and `??` (also in literals), not `\?` (knex/lib/formatter/rawFormatter.js). */
const bindingsIn = (sql: string): number => [...sql.matchAll(/\\?\?\??/g)].filter((m) => m[0] !== '\\?').length;

/**
 * Expands each tenant table reference of raw SQL (`{idap_resources}`, `{idap_resources r}`) to the
 * client's rows of the table, `(select * from idap_resources where client_id = ?) r` (the table name
 * is the alias when none is given), and splices the client id into the positional bindings at each
 * reference's place. Throws when the SQL holds another number of bindings than given.
 */
export function scopeTenantTables(
  sql: string,
  bindings: readonly Knex.RawBinding[],
  clientId: string,
): { sql: string; bindings: Knex.RawBinding[] } {
  const parts: string[] = [];
  const scoped: Knex.RawBinding[] = [];
  let copied = 0; // of sql
  let taken = 0; // of bindings
  const copyTo = (end: number) => {
    const text = sql.slice(copied, end);
    const n = bindingsIn(text);
    parts.push(text);
    scoped.push(...bindings.slice(taken, taken + n));
    copied = end;
    taken += n;
  };
  for (const m of sql.matchAll(TENANT_TABLE_REF)) {
    const [ref, table, alias] = m;
    if (!table) continue;
    copyTo(m.index);
    parts.push(`(select * from ${table} where client_id = ?) ${alias ?? table}`);
    scoped.push(clientId);
    copied += ref.length;
  }
  copyTo(sql.length);
  if (taken !== bindings.length)
    throw new Error(`tenant SQL holds ${taken} bindings, ${bindings.length} given: ${sql}`);
  return { sql: parts.join(''), bindings: scoped };
}

/**
 * The tenancy mechanism of raw SQL (for what Objection does not express: JSONB keys, `on conflict`,
 * lateral joins): `tenantSql(db, clientId).raw(sql, bindings)` runs `sql` with every tenant table
 * written as `{table}` or `{table alias}` (scopeTenantTables), so the SQL names the client's rows
 * only and never filters on `client_id` itself; a reference left unexpanded is a syntax error, not an
 * unscoped read. A statement that changes rows locates them through the scoped table, e.g.
 * `update idap_resources t set ... from {idap_resources mine} where t.id = mine.id and mine...`; an
 * INSERT writes `client_id` as a value. Postgres pulls the subquery up into the query: EXPLAIN of
 * db/repositories/resources.ts and dedupe.ts before and after (300k resources, 200k canonical
 * records) showed every read with the same plan, indexes and index conditions, while an UPDATE or
 * DELETE located through the scoped table adds one index probe (its target by key) per changed row.
 */
export function tenantSql(
  db: TransactionOrKnex,
  clientId: string,
): { raw: (sql: string, bindings?: readonly Knex.RawBinding[]) => Knex.Raw } {
  return {
    raw(sql, bindings = []) {
      const scoped = scopeTenantTables(sql, bindings, clientId);
      return db.raw(scoped.sql, scoped.bindings);
    },
  };
}
