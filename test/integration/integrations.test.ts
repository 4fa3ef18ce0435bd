import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { createLlmExtractor, type LlmExtractor } from '../../activities/llm';
import type { ActivityDeps } from '../../activities/deps';
import { credentialsSealedAt, IntegrationRepository } from '../../db/repositories/integrations';
import { CredentialCipher } from '../../lib/llm/cipher';
import { createLogger } from '../../lib/logger';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';
import { createSearchClient } from '../../search/client';
import { bearer, ownQueues, startTestApi, testConfig, type TestApi } from '../support/api';
import { caller, waitForStatus, type Caller } from '../support/jobs';
import { untilBlockedBy } from '../support/locks';
import { startTestWorker, type TestWorker } from '../support/worker';
import { startLeadSites, type LeadSites } from '../stand-ins/lead-sites';
import { startLlmStandIn, type KeyBehaviour, type LlmStandIn } from '../stand-ins/llm';

// LLM integrations through the real API (spec §4.9) and the extractor job types use (activities/llm),
// on the real Postgres, against stand-in OpenAI-compatible and Anthropic servers on 127.0.0.1.
// The breaker opens after 2 failures and re-tests after 1 second here.
const LLM_SETTINGS = {
  USER_URL_ALLOW_HOSTS: '127.0.0.0/8',
  LLM_BREAKER_FAILURES: '2',
  LLM_BREAKER_COOLDOWN_SECONDS: '1',
};

let api: TestApi;
let llm: LlmStandIn;
let extractor: LlmExtractor;
let deps: ActivityDeps;
beforeAll(async () => {
  llm = await startLlmStandIn();
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...LLM_SETTINGS });
  const config = testConfig(LLM_SETTINGS);
  deps = {
    config,
    db: api.deps.db,
    storage: Storage.fromConfig(config),
    search: createSearchClient(config),
    logger: createLogger('silent'),
    http: OutboundClient.fromConfig(config),
    workerId: 'integrations-test',
  };
  extractor = createLlmExtractor(deps);
});
afterAll(async () => {
  await Promise.allSettled([deps.http.close(), deps.search.close()]);
  await api.close();
  await llm.close();
});

type Integration = Record<string, unknown> & { id: number };
let keySeq = 0;
/** A fresh API key the stand-in knows, with what it answers. */
function newKey(behaviour: KeyBehaviour = 'ok'): string {
  keySeq += 1;
  const key = `sk-test${keySeq}-${Math.random().toString(36).slice(2, 10)}a1B${keySeq % 10}`;
  llm.keys.set(key, behaviour);
  return key;
}

async function newCaller(): Promise<
  Caller & { clientId: string; patch(path: string, body: unknown): Promise<Response> }
> {
  const creds = await api.newClient();
  const c = caller(api, bearer(creds));
  const patch = (path: string, body: unknown) =>
    fetch(`${api.url}${path}`, {
      method: 'PATCH',
      headers: { authorization: c.auth, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  return { ...c, clientId: creds.client_id, patch };
}

async function create(c: Caller, body: Record<string, unknown>): Promise<Integration> {
  const res = await c.post('/api/v1/integrations', body);
  const json = await c.json<{ success: boolean; integration: Integration }>(res);
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(json)}`);
  return json.integration;
}

/** An OpenAI-type key answered by the stand-in. */
const openAi = (key: string, extra: Record<string, unknown> = {}) => ({
  provider_name: 'openai',
  credentials: { api_key: key, base_url: `${llm.baseUrl}/v1` },
  ...extra,
});

async function get(c: Caller, id: number): Promise<Integration> {
  return (await c.json<{ integration: Integration }>(await c.get(`/api/v1/integrations/${id}`))).integration;
}

const schema = z.object({ ok: z.boolean() });
const extract = (clientId: string) =>
  extractor.extractJson({ clientId, purpose: 'test', instructions: 'answer', input: 'hello', schema });
/** The keys the stand-in was called with since `from`. */
const keysCalled = (from: number) => llm.requests.slice(from).map((r) => r.apiKey);

describe('CRUD', () => {
  test('create answers the §2.12 record with the key only as key_preview', async () => {
    const c = await newCaller();
    const res = await c.post('/api/v1/integrations', {
      provider_name: 'openai',
      credentials: { api_key: 'sk-proj-9f8e7d6c5b4a3210a1B2' },
      key_label: 'prod',
    });
    expect(res.status).toBe(201);
    const body = await c.json<{ success: boolean; integration: Integration }>(res);
    expect(body.success).toBe(true);
    expect(body.integration).toMatchObject({
      id: expect.any(Number),
      provider_name: 'openai',
      provider_label: 'OpenAI',
      key_label: 'prod',
      model: 'gpt-4o-mini',
      is_active: true,
      is_primary: false,
      priority: 0,
      daily_limit: null,
      daily_count: 0,
      minute_limit: null,
      minute_count: 0,
      health_status: 'healthy',
      consecutive_failures: 0,
      spend_limit_amount: null,
      spend_limit_period: 'monthly',
      spend_limit_action: 'warn',
      spend_limit_exceeded: false,
      key_preview: { api_key: 'sk-...a1B2' },
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(JSON.stringify(body)).not.toContain('9f8e7d6c5b4a3210');

    const primary = await create(c, {
      provider_name: 'anthropic',
      credentials: { api_key: 'sk-ant-api03-abcdefghijklmnop-xyzw1234' },
      is_primary: true,
      daily_limit: 500,
      minute_limit: 10,
      spend_limit_amount: 25.5,
      spend_limit_period: 'daily',
      spend_limit_action: 'block',
    });
    expect(primary).toMatchObject({
      provider_label: 'Anthropic',
      is_primary: true,
      priority: 10,
      daily_limit: 500,
      minute_limit: 10,
      spend_limit_amount: 25.5,
      spend_limit_period: 'daily',
      spend_limit_action: 'block',
      key_preview: { api_key: 'sk-...1234' },
    });

    const list = await c.json<{ success: boolean; integrations: Integration[]; total: number }>(
      await c.get('/api/v1/integrations'),
    );
    expect(list.total).toBe(2);
    // Selection order: primary first.
    expect(list.integrations.map((i) => i.provider_name)).toEqual(['anthropic', 'openai']);
    expect(await get(c, body.integration.id)).toEqual(body.integration);
  });

  test('the sixteen providers with their credential shapes', async () => {
    const c = await newCaller();
    const ok: Record<string, Record<string, string>> = {
      openai: { api_key: 'k1-openai-xxxx' },
      anthropic: { api_key: 'k1-anthropic-x' },
      google_gemini: { api_key: 'AIzaSyA-12345678' },
      mistral: { api_key: 'k1-mistral-xxx' },
      groq: { api_key: 'gsk_1234567890' },
      cohere: { api_key: 'co-1234567890' },
      deepseek: { api_key: 'sk-deepseek-1' },
      xai: { api_key: 'xai-123456789' },
      together: { api_key: 'tg-123456789' },
      fireworks: { api_key: 'fw-123456789' },
      perplexity: { api_key: 'pplx-12345678' },
      openrouter: { api_key: 'sk-or-v1-12345' },
      azure_openai: {
        api_key: 'az-123456789',
        endpoint: 'https://acme.openai.azure.com',
        deployment: 'gpt-4o-mini-prod',
      },
      cloudflare_workers_ai: { api_key: 'cf-123456789', account_id: '0123456789abcdef0123456789abcdef' },
      ollama: { base_url: 'http://ollama.internal:11434/v1' },
      openai_compatible: { base_url: 'http://llm.internal:8000/v1', api_key: 'local-123456', model: 'qwen2.5-7b' },
    };
    for (const [provider, credentials] of Object.entries(ok)) {
      const res = await c.post('/api/v1/integrations', { provider_name: provider, credentials });
      expect([provider, res.status]).toEqual([provider, 201]);
    }
    const list = await c.json<{ integrations: Integration[] }>(await c.get('/api/v1/integrations'));
    const byProvider = Object.fromEntries(list.integrations.map((i) => [i.provider_name, i]));
    expect(Object.keys(byProvider).sort()).toEqual(Object.keys(ok).sort());
    expect(byProvider.azure_openai).toMatchObject({
      model: 'gpt-4o-mini-prod',
      key_preview: { api_key: '...789', endpoint: 'https://acme.openai.azure.com', deployment: 'gpt-4o-mini-prod' },
    });
    expect(byProvider.ollama).toMatchObject({ key_preview: { base_url: 'http://ollama.internal:11434/v1' } });
    expect(byProvider.openai_compatible).toMatchObject({ model: 'qwen2.5-7b' });
  });

  test.each([
    [
      'an unknown provider',
      { provider_name: 'openia', credentials: { api_key: 'sk-1234567890' } },
      /provider_name "openia" is not supported/,
    ],
    ['no provider', { credentials: { api_key: 'sk-1234567890' } }, /provider_name is required/],
    ['no credentials', { provider_name: 'openai' }, /credentials is required/],
    ['no api_key', { provider_name: 'openai', credentials: {} }, /openai requires credentials\.api_key/],
    [
      'azure without deployment',
      { provider_name: 'azure_openai', credentials: { api_key: 'az-1234567', endpoint: 'https://a.openai.azure.com' } },
      /azure_openai requires credentials\.deployment/,
    ],
    [
      'cloudflare without account_id',
      { provider_name: 'cloudflare_workers_ai', credentials: { api_key: 'cf-1234567' } },
      /cloudflare_workers_ai requires credentials\.account_id/,
    ],
    ['ollama without base_url', { provider_name: 'ollama', credentials: {} }, /ollama requires credentials\.base_url/],
    [
      'ollama with a key',
      { provider_name: 'ollama', credentials: { base_url: 'http://o:11434/v1', api_key: 'x-12345678' } },
      /ollama takes no credentials\.api_key/,
    ],
    [
      'openai_compatible without base_url',
      { provider_name: 'openai_compatible', credentials: { api_key: 'x-12345678', model: 'm' } },
      /openai_compatible requires credentials\.base_url/,
    ],
    [
      'a base_url that is not http(s)',
      { provider_name: 'openai_compatible', credentials: { base_url: 'file:///etc/passwd', model: 'm' } },
      /credentials\.base_url must be an http\(s\) URL/,
    ],
    [
      'an unknown credential field',
      { provider_name: 'openai', credentials: { api_key: 'sk-1234567', password: 'x' } },
      /credentials\.password is not a openai credential/,
    ],
    [
      'a non-string key',
      { provider_name: 'openai', credentials: { api_key: 12345 } },
      /credentials\.api_key must be a non-empty string/,
    ],
  ])('400 {success:false, error} for %s', async (_what, body, message) => {
    const c = await newCaller();
    const res = await c.post('/api/v1/integrations', body);
    expect(res.status).toBe(400);
    const json = await c.json<{ success: boolean; error: string; detail: string }>(res);
    expect(json).toEqual({
      success: false,
      error: expect.stringMatching(message),
      detail: expect.stringMatching(message),
    });
  });

  test('a field of the wrong type is a 422 in the {success:false} shape', async () => {
    const c = await newCaller();
    const res = await c.post('/api/v1/integrations', openAi(newKey(), { daily_limit: 'lots' }));
    expect(res.status).toBe(422);
    expect(await c.json(res)).toMatchObject({
      success: false,
      error: 'validation_error',
      detail: [expect.objectContaining({ loc: ['body', 'daily_limit'] })],
    });
  });

  test.each(['daily_limit', 'minute_limit'])(
    "%s above the integer column's 2147483647 is a 422 naming the field on POST and PATCH; 2147483647 is accepted",
    async (field) => {
      const c = await newCaller();
      const tooBig = await c.post('/api/v1/integrations', openAi(newKey(), { [field]: 2147483648 }));
      expect(tooBig.status).toBe(422);
      expect(await c.json(tooBig)).toEqual({
        success: false,
        error: 'validation_error',
        detail: [expect.objectContaining({ loc: ['body', field], msg: expect.stringContaining('2147483647') })],
      });
      const i = await create(c, openAi(newKey(), { [field]: 2147483647 }));
      expect(i[field]).toBe(2147483647);
      const patch = await c.patch(`/api/v1/integrations/${i.id}`, { [field]: 2147483648 });
      expect(patch.status).toBe(422);
      expect(await c.json(patch)).toEqual({
        success: false,
        error: 'validation_error',
        detail: [expect.objectContaining({ loc: ['body', field] })],
      });
      const huge = await c.patch(`/api/v1/integrations/${i.id}`, { [field]: 1e12 });
      expect(huge.status).toBe(422);
      const ok = await c.patch(`/api/v1/integrations/${i.id}`, { [field]: 2147483647 });
      expect(ok.status).toBe(200);
      expect(await get(c, i.id)).toMatchObject({ [field]: 2147483647 });
    },
  );

  test('the OpenAPI document gives daily_limit and minute_limit their maximum', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            requestBody?: {
              content: Record<
                string,
                { schema: { properties?: Record<string, Record<string, unknown>>; $ref?: string } }
              >;
            };
          }
        >
      >;
      components: { schemas: Record<string, { properties?: Record<string, Record<string, unknown>> }> };
    };
    for (const [path, method] of [
      ['/api/v1/integrations', 'post'],
      ['/api/v1/integrations/{integration_id}', 'patch'],
    ] as const) {
      let schema = doc.paths[path]?.[method]?.requestBody?.content['application/json']?.schema;
      if (schema?.$ref) schema = doc.components.schemas[schema.$ref.split('/').at(-1) ?? ''];
      for (const field of ['daily_limit', 'minute_limit'])
        expect([path, field, JSON.stringify(schema?.properties?.[field])]).toEqual([
          path,
          field,
          expect.stringContaining('"maximum":2147483647'),
        ]);
      expect(JSON.stringify(schema?.properties?.spend_limit_amount)).toContain('4 decimal places');
    }
  });

  test.each([0.00004, 12.3456789, 1e-7])(
    'spend_limit_amount %p has more decimal places than are stored (4): a 422 naming the field on POST and PATCH',
    async (amount) => {
      const c = await newCaller();
      const res = await c.post('/api/v1/integrations', openAi(newKey(), { spend_limit_amount: amount }));
      expect(res.status).toBe(422);
      expect(await c.json(res)).toEqual({
        success: false,
        error: 'validation_error',
        detail: [
          expect.objectContaining({
            loc: ['body', 'spend_limit_amount'],
            msg: expect.stringContaining('4 decimal places'),
          }),
        ],
      });
      const i = await create(c, openAi(newKey(), { spend_limit_amount: 5 }));
      const patch = await c.patch(`/api/v1/integrations/${i.id}`, { spend_limit_amount: amount });
      expect(patch.status).toBe(422);
      expect(await c.json(patch)).toMatchObject({
        detail: [expect.objectContaining({ loc: ['body', 'spend_limit_amount'] })],
      });
      expect(await get(c, i.id)).toMatchObject({ spend_limit_amount: 5 });
    },
  );

  test('spend_limit_amount with up to 4 decimal places is stored as given', async () => {
    const c = await newCaller();
    for (const amount of [0.0001, 12.3456, 0.3, 999999999.9999]) {
      const i = await create(c, openAi(newKey(), { spend_limit_amount: amount }));
      expect([amount, i.spend_limit_amount, i.spend_limit_exceeded]).toEqual([amount, amount, false]);
    }
  });

  test('409 for the same credential twice for a provider; another provider or client may hold it', async () => {
    const c = await newCaller();
    const body = { provider_name: 'groq', credentials: { api_key: 'gsk_same_key_123456' } };
    expect((await c.post('/api/v1/integrations', body)).status).toBe(201);
    const again = await c.post('/api/v1/integrations', { ...body, key_label: 'another label' });
    expect(again.status).toBe(409);
    expect(await c.json(again)).toEqual({
      success: false,
      error: expect.stringContaining('already exists for groq'),
      detail: expect.any(String),
    });
    expect(
      (await c.post('/api/v1/integrations', { provider_name: 'mistral', credentials: body.credentials })).status,
    ).toBe(201);
    const other = await newCaller();
    expect((await other.post('/api/v1/integrations', body)).status).toBe(201);
  });

  test("PATCH settings and credentials, DELETE; another client's integration is a 404", async () => {
    const c = await newCaller();
    const i = await create(c, { provider_name: 'xai', credentials: { api_key: 'xai-first-key-0001' } });
    const res = await c.patch(`/api/v1/integrations/${i.id}`, {
      key_label: 'renamed',
      minute_limit: 5,
      is_primary: true,
      credentials: { api_key: 'xai-second-key-abcdefghijklmnopqrs-0002' },
    });
    expect(res.status).toBe(200);
    expect((await c.json<{ integration: Integration }>(res)).integration).toMatchObject({
      key_label: 'renamed',
      minute_limit: 5,
      is_primary: true,
      priority: 10,
      key_preview: { api_key: 'xai-...0002' },
    });
    const bad = await c.patch(`/api/v1/integrations/${i.id}`, { credentials: { api_key: '' } });
    expect(bad.status).toBe(400);

    const other = await newCaller();
    const foreign = await other.get(`/api/v1/integrations/${i.id}`);
    expect(foreign.status).toBe(404);
    expect(await other.json(foreign)).toEqual({ success: false, error: 'not_found', detail: 'integration not found' });
    expect((await other.del(`/api/v1/integrations/${i.id}`)).status).toBe(404);
    expect((await c.get('/api/v1/integrations/not-a-number')).status).toBe(404);

    const del = await c.del(`/api/v1/integrations/${i.id}`);
    expect(await c.json(del)).toEqual({ success: true, deleted: i.id });
    expect((await c.get(`/api/v1/integrations/${i.id}`)).status).toBe(404);
  });
});

test('without INTEGRATIONS_ENCRYPTION_KEY the routes answer 503 saying so', async () => {
  const bare = await startTestApi({ RATE_LIMIT_ENABLED: 'false', INTEGRATIONS_ENCRYPTION_KEY: '' });
  try {
    const c = caller(bare, bearer(await bare.newClient()));
    const res = await c.post('/api/v1/integrations', openAi(newKey()));
    expect(res.status).toBe(503);
    expect(await c.json(res)).toEqual({
      success: false,
      error: 'not_configured',
      detail: expect.stringContaining('INTEGRATIONS_ENCRYPTION_KEY'),
    });
  } finally {
    await bare.close();
  }
});

test('keys are encrypted at rest: no column of any row holds the plaintext, yet calls use it', async () => {
  const c = await newCaller();
  const key = newKey();
  const i = await create(c, openAi(key));
  // Every column of every row as text, as a database dump would show it.
  const dump = (await api.deps.db.raw(
    `SELECT t::text AS row FROM llm_integrations t UNION ALL SELECT u::text FROM llm_usage u`,
  )) as { rows: { row: string }[] };
  const text = dump.rows.map((r) => r.row).join('\n');
  expect(text).toContain(`${i.id},`);
  expect(text).not.toContain(key);
  expect(text).not.toContain(key.slice(4, 20));
  expect(text).not.toContain(Buffer.from(key).toString('base64').slice(0, 16));

  const from = llm.requests.length;
  const test = await c.post(`/api/v1/integrations/${i.id}/test`, {});
  expect((await c.json<{ test: { ok: boolean } }>(test)).test.ok).toBe(true);
  expect(keysCalled(from)).toEqual([key]);
});

test('key rotation: re-sealed with the new key, the credentials open without the old one and keep their duplicate check', async () => {
  const c = await newCaller();
  const key = newKey();
  const i = await create(c, openAi(key));
  const oldKey = String(process.env.INTEGRATIONS_ENCRYPTION_KEY);
  const nextKey = randomBytes(32).toString('base64');
  const schemaName = api.deps.config.DATABASE_SCHEMA;
  // Only this client's rows: other tests of the run keep using the run's key.
  expect(
    await new IntegrationRepository(api.deps.db, new CredentialCipher(nextKey, [oldKey]), schemaName).reseal(
      c.clientId,
    ),
  ).toEqual({ resealed: 1, unopenable: [] });
  const rotated = new IntegrationRepository(api.deps.db, new CredentialCipher(nextKey), schemaName);
  const row = await rotated.find(c.clientId, i.id);
  expect(row && rotated.credentials(row)).toEqual({ api_key: key, base_url: `${llm.baseUrl}/v1` });
  await expect(
    rotated.create(c.clientId, 'openai', { api_key: key, base_url: `${llm.baseUrl}/v1` }, {}),
  ).rejects.toMatchObject({ kind: 'conflict' });
  // The old key alone no longer opens it: a call says why instead of failing the job.
  const res = await c.json<{ test: { ok: boolean; error: string } }>(
    await c.post(`/api/v1/integrations/${i.id}/test`, {}),
  );
  expect(res.test).toMatchObject({ ok: false, error: expect.stringContaining('INTEGRATIONS_PREVIOUS_KEYS') });
});

test('a credential changed while a reseal runs keeps the change: the reseal does not write the old one back', async () => {
  const c = await newCaller();
  const [before, after] = [newKey(), newKey()];
  const i = await create(c, openAi(before));
  const runKey = String(process.env.INTEGRATIONS_ENCRYPTION_KEY);
  const oldKey = randomBytes(32).toString('base64');
  const schemaName = api.deps.config.DATABASE_SCHEMA;
  // Sealed with a previous key, so that a reseal to the run's key (which the API has) takes it up.
  await api.deps
    .db('llm_integrations')
    .where({ id: i.id })
    .update({
      credentials_sealed: new CredentialCipher(oldKey).seal(
        JSON.stringify({ api_key: before, base_url: `${llm.baseUrl}/v1` }),
        credentialsSealedAt(c.clientId, i.id),
      ),
    });
  // The row locked: the reseal reads it, then its update waits; meanwhile the credential changes as a PATCH changes it.
  const trx = await api.deps.db.transaction();
  let outcome: unknown;
  try {
    await trx('llm_integrations').where({ id: i.id }).forUpdate();
    const resealing = new IntegrationRepository(api.deps.db, new CredentialCipher(runKey, [oldKey]), schemaName).reseal(
      c.clientId,
    );
    await untilBlockedBy(api.deps.db, trx);
    await new IntegrationRepository(trx, new CredentialCipher(runKey), schemaName).update(
      c.clientId,
      i.id,
      {},
      { api_key: after, base_url: `${llm.baseUrl}/v1` },
    );
    await trx.commit();
    outcome = await resealing;
  } finally {
    if (!trx.isCompleted()) await trx.rollback();
  }
  const from = llm.requests.length;
  expect((await c.json<{ test: { ok: boolean } }>(await c.post(`/api/v1/integrations/${i.id}/test`, {}))).test.ok).toBe(
    true,
  );
  expect(keysCalled(from)).toEqual([after]);
  // Already sealed with the current key by the PATCH: nothing for the reseal to do, and no failure.
  expect(outcome).toEqual({ resealed: 0, unopenable: [] });
});

describe('live check', () => {
  test('an OpenAI-compatible key that answers: ok, with its usage recorded', async () => {
    const c = await newCaller();
    const i = await create(c, openAi(newKey()));
    const res = await c.post(`/api/v1/integrations/${i.id}/test`, {});
    expect(res.status).toBe(200);
    const body = await c.json<{ success: boolean; test: Record<string, unknown>; integration: Integration }>(res);
    expect(body.test).toMatchObject({
      ok: true,
      model: 'gpt-4o-mini',
      input_tokens: 1000,
      output_tokens: 200,
      error: null,
    });
    // gpt-4o-mini: $0.15 and $0.60 per million tokens.
    expect(body.integration.spend_current_period).toBeCloseTo(0.00027, 8);
    const request = llm.requests.at(-1);
    expect(request?.body).toMatchObject({ model: 'gpt-4o-mini', response_format: { type: 'json_schema' } });
  });

  test('an Anthropic key, through the forced tool', async () => {
    const c = await newCaller();
    const i = await create(c, {
      provider_name: 'anthropic',
      credentials: { api_key: newKey(), base_url: `${llm.baseUrl}/v1` },
    });
    const body = await c.json<{ test: Record<string, unknown> }>(await c.post(`/api/v1/integrations/${i.id}/test`, {}));
    expect(body.test).toMatchObject({
      ok: true,
      model: 'claude-3-5-haiku-latest',
      input_tokens: 1000,
      output_tokens: 200,
    });
    expect(llm.requests.at(-1)).toMatchObject({ format: 'anthropic', body: { tool_choice: { type: 'tool' } } });
  });

  test('an answer that is not JSON: not ok, yet the tokens it reports are recorded and count towards a block limit', async () => {
    const c = await newCaller();
    // $1000 per million input tokens: each stand-in answer (1000 in, 200 out) costs $1.
    const i = await create(c, {
      provider_name: 'openai_compatible',
      credentials: { api_key: newKey('prose'), base_url: `${llm.baseUrl}/v1`, model: 'm1' },
      prices: { input: 1000, output: 0 },
      spend_limit_amount: 0.5,
      spend_limit_action: 'block',
    });
    const body = await c.json<{ test: Record<string, unknown>; integration: Integration }>(
      await c.post(`/api/v1/integrations/${i.id}/test`, {}),
    );
    expect(body.test).toMatchObject({
      ok: false,
      input_tokens: 1000,
      output_tokens: 200,
      error: expect.stringContaining('not JSON'),
    });
    expect(body.integration).toMatchObject({
      consecutive_failures: 1,
      spend_current_period: 1,
      spend_limit_exceeded: true,
    });
    expect(await get(c, i.id)).toMatchObject({ spend_current_period: 1, spend_limit_exceeded: true });
    const usage = (await api.deps.db('llm_usage').where({ integration_id: i.id })) as Record<string, unknown>[];
    expect(usage).toEqual([
      expect.objectContaining({ purpose: 'integration_test', input_tokens: 1000, output_tokens: 200 }),
    ]);
    // The block limit is reached: the next call skips the key.
    const from = llm.requests.length;
    expect(await extract(c.clientId)).toEqual({ ok: false, reason: expect.stringContaining('spend limit reached') });
    expect(llm.requests.length).toBe(from);
  });

  test.each([
    ['anthropic', 'v1', 'without the forced tool_use block'],
    ['google_gemini', 'v1beta', 'not JSON'],
    ['cohere', 'v2', 'not JSON'],
  ])(
    '%s: an answer without the JSON asked for still records the tokens it reports',
    async (provider, version, error) => {
      const c = await newCaller();
      const i = await create(c, {
        provider_name: provider,
        credentials: { api_key: newKey('prose'), base_url: `${llm.baseUrl}/${version}` },
        prices: { input: 1000, output: 0 },
      });
      const body = await c.json<{ test: Record<string, unknown>; integration: Integration }>(
        await c.post(`/api/v1/integrations/${i.id}/test`, {}),
      );
      expect(body.test).toMatchObject({
        ok: false,
        input_tokens: 1000,
        output_tokens: 200,
        error: expect.stringContaining(error),
      });
      expect(await get(c, i.id)).toMatchObject({ spend_current_period: 1, consecutive_failures: 1 });
    },
  );

  test('a key the provider refuses: not ok, the 401 said, one failure counted', async () => {
    const c = await newCaller();
    const i = await create(c, openAi('sk-unknown-to-provider-0000'));
    const body = await c.json<{ test: Record<string, unknown>; integration: Integration }>(
      await c.post(`/api/v1/integrations/${i.id}/test`, {}),
    );
    expect(body.test).toMatchObject({ ok: false, error: expect.stringContaining('401') });
    expect(body.integration).toMatchObject({
      health_status: 'healthy',
      consecutive_failures: 1,
      last_error: expect.stringContaining('401'),
    });
  });
});

describe('selection', () => {
  test('primary first, then priority, then the oldest; inactive keys are skipped', async () => {
    const c = await newCaller();
    const [oldest, higher, primary] = [newKey(), newKey(), newKey()];
    const a = await create(c, openAi(oldest));
    const b = await create(c, openAi(higher, { priority: 5 }));
    const p = await create(c, openAi(primary, { is_primary: true }));
    let from = llm.requests.length;
    expect(await extract(c.clientId)).toEqual({
      ok: true,
      data: { ok: true },
      integrationId: p.id,
      provider: 'openai',
      model: 'gpt-4o-mini',
    });
    expect(keysCalled(from)).toEqual([primary]);

    await c.patch(`/api/v1/integrations/${p.id}`, { is_active: false });
    from = llm.requests.length;
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: b.id });
    await c.patch(`/api/v1/integrations/${b.id}`, { priority: 0 });
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: a.id });
    expect(keysCalled(from)).toEqual([higher, oldest]);
  });

  test('no integration: the reason, no call', async () => {
    const c = await newCaller();
    expect(await extract(c.clientId)).toEqual({
      ok: false,
      reason: expect.stringContaining('no usable LLM integration'),
    });
  });

  test('a 429 moves to the next key, and the limited key rests for its Retry-After without counting as a failure', async () => {
    const c = await newCaller();
    const [limited, spare] = [newKey('rate_limited'), newKey()];
    const a = await create(c, openAi(limited, { is_primary: true }));
    const b = await create(c, openAi(spare));
    const from = llm.requests.length;
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: b.id });
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: b.id });
    expect(keysCalled(from)).toEqual([limited, spare, spare]);
    expect(await get(c, a.id)).toMatchObject({
      health_status: 'healthy',
      consecutive_failures: 0,
      last_error: expect.stringContaining('429'),
    });
  });

  test('the breaker: failures make a key unhealthy and skipped; after the cool-down one call re-tests it', async () => {
    const c = await newCaller();
    const [flaky, spare] = [newKey('server_error'), newKey()];
    const a = await create(c, openAi(flaky, { is_primary: true }));
    await create(c, openAi(spare));
    const from = llm.requests.length;
    await extract(c.clientId);
    expect(await get(c, a.id)).toMatchObject({ health_status: 'healthy', consecutive_failures: 1 });
    await extract(c.clientId);
    expect(await get(c, a.id)).toMatchObject({
      health_status: 'unhealthy',
      consecutive_failures: 2,
      retry_at: expect.any(String),
      last_error: expect.stringContaining('500'),
    });
    // Open: the flaky key is not even tried.
    await extract(c.clientId);
    expect(keysCalled(from)).toEqual([flaky, spare, flaky, spare, spare]);

    llm.keys.set(flaky, 'ok');
    const retryAt = Date.parse(String((await get(c, a.id)).retry_at));
    await new Promise((r) => setTimeout(r, Math.max(0, retryAt - Date.now()) + 100));
    const again = llm.requests.length;
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: a.id });
    expect(keysCalled(again)).toEqual([flaky]);
    expect(await get(c, a.id)).toMatchObject({ health_status: 'healthy', consecutive_failures: 0, retry_at: null });
  });

  test('a minute limit is counted atomically by concurrent calls; a daily limit moves to the next key', async () => {
    // A call pair must not straddle a minute boundary (the window would reset between them).
    const second = new Date().getUTCSeconds();
    if (second > 50) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const c = await newCaller();
    const only = await create(c, openAi(newKey(), { minute_limit: 3 }));
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => extract(c.clientId)));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(3);
    expect(outcomes.find((o) => !o.ok)).toEqual({
      ok: false,
      reason: expect.stringContaining('request limit reached'),
    });
    expect(await get(c, only.id)).toMatchObject({ minute_count: 3, daily_count: 3 });

    const d = await newCaller();
    const daily = await create(d, openAi(newKey(), { daily_limit: 1, is_primary: true }));
    const spare = await create(d, openAi(newKey()));
    expect(await extract(d.clientId)).toMatchObject({ ok: true, integrationId: daily.id });
    expect(await extract(d.clientId)).toMatchObject({ ok: true, integrationId: spare.id });
    expect(await get(d, daily.id)).toMatchObject({ daily_limit: 1, daily_count: 1 });
  });

  test('spend limit with block: the key is skipped once its spend reaches the limit', async () => {
    const c = await newCaller();
    // $1000 per million input tokens: each stand-in answer (1000 in, 200 out) costs $1.
    const i = await create(
      c,
      openAi(newKey(), { prices: { input: 1000, output: 0 }, spend_limit_amount: 1.5, spend_limit_action: 'block' }),
    );
    expect(await extract(c.clientId)).toMatchObject({ ok: true });
    expect(await get(c, i.id)).toMatchObject({ spend_current_period: 1, spend_limit_exceeded: false });
    expect(await extract(c.clientId)).toMatchObject({ ok: true });
    expect(await get(c, i.id)).toMatchObject({ spend_current_period: 2, spend_limit_exceeded: true });
    const from = llm.requests.length;
    expect(await extract(c.clientId)).toEqual({ ok: false, reason: expect.stringContaining('spend limit reached') });
    expect(llm.requests.length).toBe(from);
    // Raising the limit makes it usable again.
    await c.patch(`/api/v1/integrations/${i.id}`, { spend_limit_amount: 10 });
    expect(await extract(c.clientId)).toMatchObject({ ok: true });
  });

  test('an answer that is not JSON counts as a failure, its tokens are recorded, and a block limit they reach skips the key', async () => {
    const c = await newCaller();
    const [proseKey, spareKey] = [newKey('prose'), newKey()];
    const prose = await create(
      c,
      openAi(proseKey, {
        is_primary: true,
        prices: { input: 1000, output: 0 },
        spend_limit_amount: 1,
        spend_limit_action: 'block',
      }),
    );
    const spare = await create(c, openAi(spareKey));
    const from = llm.requests.length;
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: spare.id });
    expect(await get(c, prose.id)).toMatchObject({
      consecutive_failures: 1,
      spend_current_period: 1,
      spend_limit_exceeded: true,
    });
    const usage = (await api.deps.db('llm_usage').where({ integration_id: prose.id })) as Record<string, unknown>[];
    expect(usage).toEqual([expect.objectContaining({ purpose: 'test', input_tokens: 1000, output_tokens: 200 })]);
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: spare.id });
    expect(keysCalled(from)).toEqual([proseKey, spareKey, spareKey]);
  });

  test('a block key created at its limit (0) is skipped from the first call', async () => {
    const c = await newCaller();
    const [zeroKey, spareKey] = [newKey(), newKey()];
    const zero = await create(
      c,
      openAi(zeroKey, { is_primary: true, spend_limit_amount: 0, spend_limit_action: 'block' }),
    );
    expect(zero).toMatchObject({ spend_limit_exceeded: true, spend_current_period: 0 });
    const spare = await create(c, openAi(spareKey));
    const from = llm.requests.length;
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: spare.id });
    expect(keysCalled(from)).toEqual([spareKey]);
    // With warn it is used (and stays flagged).
    await c.patch(`/api/v1/integrations/${zero.id}`, { spend_limit_action: 'warn' });
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: zero.id });
  });

  test('a PATCH that lowers a block limit below the spend skips the key from the next call', async () => {
    const c = await newCaller();
    const key = newKey();
    const i = await create(
      c,
      openAi(key, { prices: { input: 1000, output: 0 }, spend_limit_amount: 10, spend_limit_action: 'block' }),
    );
    expect(await extract(c.clientId)).toMatchObject({ ok: true, integrationId: i.id });
    const patched = await c.json<{ integration: Integration }>(
      await c.patch(`/api/v1/integrations/${i.id}`, { spend_limit_amount: 1 }),
    );
    expect(patched.integration).toMatchObject({ spend_current_period: 1, spend_limit_exceeded: true });
    const from = llm.requests.length;
    expect(await extract(c.clientId)).toEqual({ ok: false, reason: expect.stringContaining('spend limit reached') });
    expect(llm.requests.length).toBe(from);
  });

  test('spend limit with warn: calls go on, the flag is set and one event stored', async () => {
    const c = await newCaller();
    const i = await create(c, openAi(newKey(), { prices: { input: 1000, output: 0 }, spend_limit_amount: 1.5 }));
    for (let n = 0; n < 3; n += 1) expect(await extract(c.clientId)).toMatchObject({ ok: true });
    expect(await get(c, i.id)).toMatchObject({
      spend_limit_action: 'warn',
      spend_current_period: 3,
      spend_limit_exceeded: true,
    });
    const events = (await api.deps
      .db('events')
      .where({ client_id: c.clientId, name: 'integration.spend_limit_exceeded' })) as {
      data: Record<string, unknown>;
    }[];
    expect(events.map((e) => e.data)).toEqual([
      expect.objectContaining({ integration_id: i.id, spend_limit_amount: 1.5, spend_limit_action: 'warn' }),
    ]);
  });

  test('a base URL on a private address is refused by the SSRF guard unless the operator allows it', async () => {
    const c = await newCaller();
    await create(c, openAi(newKey()));
    const guarded = createLlmExtractor({
      ...deps,
      http: OutboundClient.fromConfig(testConfig({ USER_URL_ALLOW_HOSTS: '' })),
    });
    const from = llm.requests.length;
    const outcome = await guarded.extractJson({
      clientId: c.clientId,
      purpose: 'test',
      instructions: 'answer',
      input: 'hello',
      schema,
    });
    expect(outcome).toEqual({
      ok: false,
      reason: expect.stringMatching(/is not allowed \(only public internet hosts/),
    });
    expect(llm.requests.length).toBe(from);
  });
});

describe('crawlSite ai_extraction', () => {
  let worker: TestWorker;
  let sites: LeadSites;
  let siteApi: TestApi;
  beforeAll(async () => {
    sites = await startLeadSites();
    siteApi = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...LLM_SETTINGS, ...ownQueues('integrations') });
    worker = await startTestWorker({
      types: ['crawlSite'],
      identity: 'integrations-test-worker',
      overrides: { ...LLM_SETTINGS, ...ownQueues('integrations') },
    });
  });
  afterAll(async () => {
    await worker.stop();
    await siteApi.close();
    await sites.close();
  });

  async function crawl(c: Caller, url: string): Promise<Record<string, unknown>> {
    const res = await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url, ai_extraction: true } });
    expect(res.status).toBe(201);
    const { job_id } = await c.json<{ job_id: string }>(res);
    const done = await waitForStatus(c, job_id, ['completed', 'failed'], 60000);
    expect(done.status).toBe('completed');
    return (await c.json<{ data: Record<string, unknown> }>(await c.get(`/api/v1/jobs/${job_id}/results`))).data;
  }

  test("fills company_info from the compendium through the client's integration", async () => {
    const creds = await siteApi.newClient();
    const c = caller(siteApi, bearer(creds));
    const key = newKey();
    const res = await c.post('/api/v1/integrations', {
      provider_name: 'anthropic',
      credentials: { api_key: key, base_url: `${llm.baseUrl}/v1` },
    });
    const { integration } = await c.json<{ integration: Integration }>(res);
    llm.answer = {
      name: 'Invented Name Ltd',
      description: 'Makes widgets for manufacturers.',
      industry: 'Industrial manufacturing',
      key_services: ['Widget design', 'Widget repair'],
      target_audience: 'Manufacturers',
      address: null,
    };
    const from = llm.requests.length;
    const data = await crawl(c, sites.url({ leads: 2 }));
    const info = data.company_info as Record<string, unknown>;
    // The site's own name (og:site_name) stays; the model fills what the markup did not say.
    expect(info.name).not.toBe('Invented Name Ltd');
    expect(info).toMatchObject({
      description: 'Makes widgets for manufacturers.',
      industry: 'Industrial manufacturing',
      key_services: ['Widget design', 'Widget repair'],
      target_audience: 'Manufacturers',
      address: null,
    });
    expect(data.ai_extraction).toEqual({
      integration_id: integration.id,
      provider: 'anthropic',
      model: 'claude-3-5-haiku-latest',
      fields: ['description', 'industry', 'target_audience', 'key_services'],
    });
    expect(data.errors).toEqual([]);
    // The model read the crawled text: the page's addresses are in what it was sent.
    const sent = JSON.stringify(llm.requests.slice(from).map((r) => r.body.messages));
    expect(sent).toMatch(/lead1@/);
    // No compendium was asked for: none is stored.
    expect(data.compendium).toBeUndefined();
    llm.answer = { ok: true };
  });

  test('a cancel during the LLM call stops it within 3 s', async () => {
    const c = caller(siteApi, bearer(await siteApi.newClient()));
    const key = newKey('hang');
    expect((await c.post('/api/v1/integrations', openAi(key))).status).toBe(201);
    const res = await c.post('/api/v1/jobs/crawlSite/submit', {
      payload: { url: sites.url({ leads: 1 }), ai_extraction: true },
    });
    const { job_id } = await c.json<{ job_id: string }>(res);
    const deadline = Date.now() + 30000;
    let request;
    while (!(request = llm.requests.find((r) => r.apiKey === key))) {
      if (Date.now() > deadline) throw new Error('the LLM call did not start');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await c.del(`/api/v1/jobs/${job_id}`)).status).toBe(200);
    const cancelledAt = Date.now();
    expect((await waitForStatus(c, job_id, ['cancelled'], 10000)).status).toBe('cancelled');
    while (request.closedAt === undefined && Date.now() < cancelledAt + 5000)
      await new Promise((r) => setTimeout(r, 50));
    expect(request.closedAt).toBeDefined();
    expect((request.closedAt ?? Infinity) - cancelledAt).toBeLessThan(3000);
  });

  test('without a usable integration company_info stays deterministic and the reason is in errors', async () => {
    const c = caller(siteApi, bearer(await siteApi.newClient()));
    const data = await crawl(c, sites.url({ leads: 1 }));
    expect(data.company_info).toMatchObject({ industry: null, key_services: null, target_audience: null });
    expect(data.ai_extraction).toBeUndefined();
    expect(data.errors).toEqual([
      { url: null, error: expect.stringContaining('ai_extraction: no usable LLM integration') },
    ]);
  });
});
