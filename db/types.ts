import type { Knex } from 'knex';

/** The process's database handle (one pool; db/index.ts opens it), or a transaction of it. */
export type Db = Knex;
