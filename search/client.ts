import { Client, errors } from '@elastic/elasticsearch';
import type { Config } from '../lib/config';

export type SearchClient = Client;

export function createSearchClient(config: Pick<Config, 'ELASTICSEARCH_URL'>): SearchClient {
  return new Client({ node: config.ELASTICSEARCH_URL, requestTimeout: 30000, maxRetries: 2 });
}

/** Index names carry the configured prefix, so deployments and test runs share one cluster. */
export function indexName(prefix: string, name: string): string {
  return `${prefix}-${name}`;
}

/**
 * Readiness: cluster health, not `GET /` (the node dev/ runs has no root handler, and
 * health is what matters anyway).
 */
export async function pingSearch(client: SearchClient): Promise<void> {
  const health = await client.cluster.health({ timeout: '2s' });
  if (health.status === 'red') throw new Error('elasticsearch cluster is red');
}

// Not refusals of the request itself: Elasticsearch is overloaded, timed out, or rejects our own keys.
const NOT_THE_REQUEST = new Set([401, 403, 408, 429]);

/**
 * Why Elasticsearch refused a request as it was built (a 4xx answer: a malformed query, a bad
 * search_after value), which retrying cannot fix; undefined for an outage (no answer, a 5xx, 429).
 */
export function searchRefusal(err: unknown): string | undefined {
  if (!(err instanceof errors.ResponseError)) return undefined;
  const status = err.meta.statusCode ?? 0;
  if (status < 400 || status >= 500 || NOT_THE_REQUEST.has(status)) return undefined;
  type Cause = { type?: string; reason?: string };
  const error = (err.body as { error?: Cause & { root_cause?: Cause[] } } | undefined)?.error;
  // "all shards failed" says nothing; the first root cause says what was wrong.
  const cause = error?.root_cause?.[0] ?? error;
  return (cause?.reason ?? cause?.type ?? `HTTP ${status}`).slice(0, 300);
}
