import type { Model, QueryBuilder } from 'objection';

/**
 * One page of a listing, newest first (created_at, then id, both descending: a stable order when
 * rows share a timestamp), and the count of all rows the query matches: the two are run together.
 */
export async function newestFirstPage<M extends Model>(
  query: QueryBuilder<M, M[]>,
  limit: number,
  offset: number,
): Promise<{ total: number; rows: M[] }> {
  const [total, rows] = await Promise.all([
    query.clone().resultSize(),
    query
      .clone()
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(limit)
      .offset(offset),
  ]);
  return { total, rows };
}
