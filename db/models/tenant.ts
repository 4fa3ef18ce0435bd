import { Model, type ModelClass, type QueryBuilder, type QueryBuilderType, type TransactionOrKnex } from 'objection';

/**
 * The one tenancy mechanism: a row owned by a client. Every query on a tenant table starts from
 * `Model.forClient(db, clientId)` (or applies the `forClient` modifier inside a relation or a
 * join), so another client's row is simply not there and another client's id answers 404.
 *
 * A tenant model declares only its table (and, when the table keeps soft-deleted rows, overrides
 * `tenantScope` to hide them). `test/unit/tenancy.test.ts` fails when db/, api/, activities/ or
 * workers/ filter on `client_id` by hand outside db/models/; the few commented exceptions (a
 * measured hot path in raw SQL, a lookup that must cross tenants such as a verified domain) are
 * listed there with their reason.
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
  static forClient<M extends TenantModel>(this: new () => M, db: TransactionOrKnex, clientId: string): QueryBuilderType<M> {
    // `this: new () => M` (as Objection types Model.query) lets TypeScript infer the subclass.
    return (this as unknown as ModelClass<M>).query(db).modify('forClient', clientId);
  }
}
