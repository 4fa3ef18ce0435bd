import { Client } from '@elastic/elasticsearch';
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
