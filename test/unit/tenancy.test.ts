import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { scopeTenantTables } from '../../db/models/tenant';

/**
 * Tenancy has one mechanism (db/models/tenant.ts: `Model.forClient(db, clientId)` and the
 * `forClient` modifier; in raw SQL `tenantSql(db, clientId)`, whose `{table}` references expand to
 * the client's rows). A filter on `client_id` written by hand anywhere else is how one missed
 * `where` becomes a cross-tenant leak, so this test lists every such filter in the code that
 * queries the database. A deliberate exception (raw SQL on a measured hot path, a lookup that must
 * cross tenants) carries a `tenancy:` comment with its reason on the line or just above it.
 */
const ROOT = join(__dirname, '..', '..');
const SCANNED = ['db', 'api', 'activities', 'workers', 'lib', 'search'];
const SKIPPED = ['db/models', 'db/migrations'];

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const rel = relative(ROOT, path);
    if (SKIPPED.some((s) => rel === s || rel.startsWith(s + '/'))) continue;
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts')) out.push(path);
  }
  return out;
}

/** A knex/Objection where-call naming client_id (object or column form), or raw SQL comparing it. */
const HAND_FILTERS = [
  /\.(?:where|andWhere|orWhere|whereNot|whereIn|whereNotIn)\(\s*\{[^}]*\bclient_id\b/g,
  /\.(?:where|andWhere|orWhere|whereNot|whereIn|whereNotIn)\(\s*['"`][\w.]*\bclient_id['"`]/g,
  /\bclient_id\s*(?:=|<>|!=|\bIN\b|\bis\s+not\s+distinct\s+from\b)\s*(?:\?|\$\d|:\w|\(|ANY)/gi,
];

/** The tables of the models that extend TenantModel (db/models/), read from their source. */
function tenantTables(): string[] {
  const dir = join(ROOT, 'db/models');
  const tables: string[] = [];
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), 'utf8');
    for (const m of text.matchAll(
      /class \w+ extends (?:Timestamped\()?TenantModel\)? \{\s*static override tableName = '(\w+)'/g,
    ))
      tables.push(m[1] as string);
  }
  return tables;
}

/**
 * Raw SQL reading or changing a tenant table by its bare name (`from jobs`, `join webhooks w`,
 * `update idap_resources`), not through tenantSql's `{table}`: such a statement is unscoped unless
 * it filters by hand, so it needs a `tenancy:` comment saying why it is safe.
 */
const bareTable = (names: string[]) =>
  new RegExp(`\\b(?:from|join|update|delete\\s+from|using)\\s+(?:${names.join('|')})\\b(?![.'"/])`, 'gi');

export function bareTenantTables(): string[] {
  return scan([bareTable(tenantTables())]);
}

export function handWrittenTenantFilters(): string[] {
  return scan(HAND_FILTERS);
}

function scan(patterns: RegExp[]): string[] {
  const found: string[] = [];
  for (const file of SCANNED.flatMap((d) => sources(join(ROOT, d)))) {
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n');
    for (const pattern of patterns) {
      for (const m of text.matchAll(pattern)) {
        const line = text.slice(0, m.index).split('\n').length - 1;
        const near = lines.slice(Math.max(0, line - 3), line + 1).join('\n');
        if (/tenancy:/.test(near)) continue;
        found.push(`${relative(ROOT, file)}:${line + 1}: ${lines[line]!.trim()}`);
      }
    }
  }
  return [...new Set(found)].sort();
}

describe('tenancy: one mechanism', () => {
  it('no query filters on client_id by hand outside db/models (exceptions say why with a tenancy: comment)', () => {
    expect(handWrittenTenantFilters()).toEqual([]);
  });

  it('raw SQL names a tenant table only through tenantSql (exceptions say why with a tenancy: comment)', () => {
    expect(tenantTables()).toEqual(expect.arrayContaining(['jobs', 'idap_resources', 'webhooks', 'mail_messages']));
    expect(bareTenantTables()).toEqual([]);
    const seen = (sql: string) => new RegExp(bareTable(['jobs', 'webhooks']).source, 'i').test(sql);
    for (const sql of [
      'select * from jobs where id = ?',
      'x join webhooks w on w.id = y',
      'UPDATE jobs SET status = ?',
      'delete from jobs where id = ?',
    ])
      expect(seen(sql)).toBe(true);
    for (const sql of [
      'select * from {jobs} where id = ?',
      'join {webhooks w} on true',
      "import { x } from 'jobs'",
      'from jobs_archive',
      'from jobs.ts',
    ])
      expect(seen(sql)).toBe(false);
  });

  it('the scan sees a hand-written filter in each of its spellings', () => {
    const samples = [
      "db('t').where({ client_id: clientId, id })",
      "db('t').where('t.client_id', clientId)",
      "db.raw('select 1 from t where client_id = ?', [clientId])",
      'sql`... WHERE j.client_id = $1`',
    ];
    // What tenantSql expands `{t}` to: written out by hand, it is a hand filter (allowed in db/models only).
    samples.push(scopeTenantTables('select 1 from {t}', [], 'c').sql);
    for (const s of samples) expect(HAND_FILTERS.some((p) => new RegExp(p.source, p.flags).test(s))).toBe(true);
    const allowed = [
      "db('t').insert({ id, client_id: clientId })",
      'insert into t (client_id, k) values (?, ?) on conflict (client_id, k) do nothing',
      "tenantSql(db, clientId).raw('select 1 from {t} where k = ?', [k])",
    ];
    for (const s of allowed) expect(HAND_FILTERS.some((p) => new RegExp(p.source, p.flags).test(s))).toBe(false);
  });
});

describe("tenantSql: raw SQL on the client's rows", () => {
  const scope = (sql: string, bindings: unknown[]) => scopeTenantTables(sql, bindings as never, 'client-1');

  it("expands each {table} and {table alias} to the client's rows and binds the client id at its place", () => {
    expect(scope('select * from {t} where a = ?', [1])).toEqual({
      sql: 'select * from (select * from t where client_id = ?) t where a = ?',
      bindings: ['client-1', 1],
    });
    expect(
      scope('select ? from {t a} join {u b} on b.x = a.x and b.y = ? where a.z = ? and b.w = ?', [0, 1, 2, 3]),
    ).toEqual({
      sql: 'select ? from (select * from t where client_id = ?) a join (select * from u where client_id = ?) b on b.x = a.x and b.y = ? where a.z = ? and b.w = ?',
      bindings: [0, 'client-1', 'client-1', 1, 2, 3],
    });
  });

  it('counts bindings as knex does (?? is one, \\? none, also in literals) and leaves literals and comments alone', () => {
    expect(
      scope(String.raw`select ??, '?', '{t}', coalesce(f, '{new}'), '{}', j \? 'k' from {t} where x = ?`, [
        'col',
        'q',
        1,
      ]),
    ).toEqual({
      sql: String.raw`select ??, '?', '{t}', coalesce(f, '{new}'), '{}', j \? 'k' from (select * from t where client_id = ?) t where x = ?`,
      bindings: ['col', 'q', 'client-1', 1],
    });
    expect(scope("select 'it''s {t}' from {t}", [])).toEqual({
      sql: "select 'it''s {t}' from (select * from t where client_id = ?) t",
      bindings: ['client-1'],
    });
    expect(scope("-- the client's {t}\nselect 'a' /* {t} */ from {t}", [])).toEqual({
      sql: "-- the client's {t}\nselect 'a' /* {t} */ from (select * from t where client_id = ?) t",
      bindings: ['client-1'],
    });
  });

  it('refuses bindings that do not match the SQL (the client id would land at the wrong place)', () => {
    expect(() => scope('select * from {t} where a = ?', [])).toThrow(/holds 1 bindings, 0 given/);
    expect(() => scope('select * from {t}', [1])).toThrow(/holds 0 bindings, 1 given/);
  });
});
