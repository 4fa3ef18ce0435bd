import { createSearchClient, indexName, type SearchClient } from '../../search/client';
import { Storage } from '../../lib/storage';
import { testConfig } from '../support/api';

const config = testConfig();
let search: SearchClient;
beforeAll(() => {
  search = createSearchClient(config);
});
afterAll(() => search.close());

describe('MinIO object storage', () => {
  const storage = Storage.fromConfig(config);

  test('a media object is stored in the client bucket and served at its public URL', async () => {
    const bytes = Buffer.from(`hello ${Date.now()}`);
    const stored = await storage.put('cli_storagetest', 'landings/abc/page.html', bytes, 'text/html');
    expect(stored.bucket).toBe(`${config.MINIO_BUCKET_PREFIX}-cli-storagetest`);
    expect(stored.url).toBe(`${config.MEDIA_PUBLIC_URL}/${stored.bucket}/landings/abc/page.html`);
    expect((await storage.get(stored.bucket, stored.key)).equals(bytes)).toBe(true);
    // Anonymous HTTP GET, as a browser would fetch the hosted URL.
    const res = await fetch(stored.url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html');
    expect(Buffer.from(await res.arrayBuffer()).equals(bytes)).toBe(true);
  });

  test('private objects are not publicly readable', async () => {
    const stored = await storage.putPrivate('jobs/x/result.json', '{"a":1}', 'application/json');
    expect((await storage.get(stored.bucket, stored.key)).toString()).toBe('{"a":1}');
    expect((await fetch(stored.url)).status).toBe(403);
  });

  test('removing an object that is not there succeeds, even in a bucket never created (a job cancelled before it stored anything)', async () => {
    const fresh = Storage.fromConfig({
      ...config,
      MINIO_BUCKET_PREFIX: `${config.MINIO_BUCKET_PREFIX}-nb${Date.now().toString(36)}`,
    });
    await expect(fresh.remove(fresh.resultsBucket, 'jobs/never/result.json')).resolves.toBeUndefined();
    const stored = await storage.putPrivate('jobs/gone/result.json', '{}', 'application/json');
    await storage.remove(stored.bucket, stored.key);
    await expect(storage.remove(stored.bucket, stored.key)).resolves.toBeUndefined();
    await expect(storage.get(stored.bucket, stored.key)).rejects.toThrow();
  });
});

describe('Elasticsearch', () => {
  test('documents are indexed, searched and aggregated', async () => {
    const index = indexName(config.ES_INDEX_PREFIX, 'foundation-check');
    await search.indices.create({
      index,
      settings: { number_of_shards: 1, number_of_replicas: 0 },
      mappings: {
        properties: {
          name: { type: 'text' },
          category: { type: 'keyword' },
          rating: { type: 'float' },
          client_id: { type: 'keyword' },
        },
      },
    });
    await search.bulk({
      refresh: true,
      operations: [
        { index: { _index: index, _id: '1' } },
        { name: 'Leeds Artisan Bakery', category: 'bakery', rating: 4.5, client_id: 'a' },
        { index: { _index: index, _id: '2' } },
        { name: 'Bakery on the Corner', category: 'bakery', rating: 3.5, client_id: 'a' },
        { index: { _index: index, _id: '3' } },
        { name: 'Corner Cafe', category: 'cafe', rating: 4.0, client_id: 'a' },
        { index: { _index: index, _id: '4' } },
        { name: 'Other Tenant Bakery', category: 'bakery', rating: 5.0, client_id: 'b' },
      ],
    });
    const res = await search.search({
      index,
      query: { bool: { must: [{ match: { name: 'bakery' } }], filter: [{ term: { client_id: 'a' } }] } },
      aggs: { categories: { terms: { field: 'category' } }, avg_rating: { avg: { field: 'rating' } } },
    });
    expect(res.hits.hits.map((h) => h._id).sort()).toEqual(['1', '2']);
    const buckets = (res.aggregations?.categories as { buckets: { key: string; doc_count: number }[] }).buckets;
    expect(buckets).toEqual([{ key: 'bakery', doc_count: 2 }]);
    expect((res.aggregations?.avg_rating as { value: number }).value).toBeCloseTo(4.0);

    await search.delete({ index, id: '2', refresh: true });
    expect((await search.count({ index, query: { term: { client_id: 'a' } } })).count).toBe(2);
  });
});
