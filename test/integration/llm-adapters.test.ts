import { callLlm, LlmError, type LlmCall } from '../../lib/llm/call';
import type { Credentials, ProviderName } from '../../lib/llm/providers';
import { OutboundClient } from '../../lib/outbound';
import { startLlmStandIn, type LlmStandIn } from '../stand-ins/llm';

// Each wire format against its stand-in on 127.0.0.1: the request it sends (key header, path,
// JSON-schema output) and how it reads the answer, the usage and a 429.
let llm: LlmStandIn;
let http: OutboundClient;
beforeAll(async () => {
  llm = await startLlmStandIn();
  http = new OutboundClient({ allowHosts: ['127.0.0.0/8'], userAgent: 'llm-adapters-test' });
  llm.answer = { name: 'Acme', services: ['a', 'b'] };
  llm.usage = { input: 321, output: 45 };
});
afterAll(async () => {
  await http.close();
  await llm.close();
});

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, services: { type: 'array', items: { type: 'string' } } },
  required: ['name'],
};
const call = (provider: ProviderName, credentials: Credentials): LlmCall => ({
  provider,
  credentials,
  instructions: 'Extract.',
  input: 'Acme makes a and b.',
  jsonSchema: schema,
  timeoutMs: 5000,
});

const cases: [ProviderName, (key: string) => Credentials, string, RegExp][] = [
  ['openai', (k) => ({ api_key: k, base_url: `${'BASE'}/v1` }), 'gpt-4o-mini', /^\/v1\/chat\/completions$/],
  [
    'azure_openai',
    (k) => ({ api_key: k, endpoint: 'BASE', deployment: 'extractor-prod' }),
    'extractor-prod',
    /^\/openai\/deployments\/extractor-prod\/chat\/completions\?api-version=2024-10-21$/,
  ],
  [
    'cloudflare_workers_ai',
    (k) => ({ api_key: k, account_id: 'abc123', base_url: 'BASE/client/v4/accounts/abc123/ai/v1' }),
    '@cf/meta/llama-3.1-8b-instruct',
    /^\/client\/v4\/accounts\/abc123\/ai\/v1\/chat\/completions$/,
  ],
  ['anthropic', (k) => ({ api_key: k, base_url: 'BASE/v1' }), 'claude-3-5-haiku-latest', /^\/v1\/messages$/],
  [
    'google_gemini',
    (k) => ({ api_key: k, base_url: 'BASE/v1beta' }),
    'gemini-2.0-flash',
    /^\/v1beta\/models\/gemini-2.0-flash:generateContent$/,
  ],
  ['cohere', (k) => ({ api_key: k, base_url: 'BASE/v2' }), 'command-r-08-2024', /^\/v2\/chat$/],
];

const withBase = (c: Credentials): Credentials =>
  Object.fromEntries(Object.entries(c).map(([k, v]) => [k, v.replace('BASE', llm.baseUrl)]));

test.each(cases)('%s: JSON-schema output, answer and usage', async (provider, creds, model, path) => {
  const key = `key-${provider}`;
  llm.keys.set(key, 'ok');
  const from = llm.requests.length;
  const answer = await callLlm(http, call(provider, withBase(creds(key))));
  expect(answer).toEqual({ json: { name: 'Acme', services: ['a', 'b'] }, model, inputTokens: 321, outputTokens: 45 });
  const [request] = llm.requests.slice(from);
  expect(request?.apiKey).toBe(key);
  expect(request?.path).toMatch(path);
  // The schema travels in each format's own place.
  const sent = JSON.stringify(request?.body);
  expect(sent).toContain('"services"');
});

test.each(cases)('%s: a 429 is rate_limited with its Retry-After', async (provider, creds) => {
  const key = `limited-${provider}`;
  llm.keys.set(key, 'rate_limited');
  llm.retryAfterSeconds = 7;
  const err = await callLlm(http, call(provider, withBase(creds(key)))).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LlmError);
  expect(err).toMatchObject({ kind: 'rate_limited' });
  // Cohere's 429 carries no Retry-After.
  if (provider !== 'cohere') expect((err as LlmError).retryAfterSeconds).toBe(7);
});

test('an OpenAI 429 without Retry-After rests for x-ratelimit-reset-requests', async () => {
  llm.keys.set('limited-no-header', 'rate_limited');
  llm.retryAfterSeconds = 90;
  llm.omitRetryAfter = true;
  try {
    await expect(
      callLlm(http, call('openai', { api_key: 'limited-no-header', base_url: `${llm.baseUrl}/v1` })),
    ).rejects.toMatchObject({ kind: 'rate_limited', retryAfterSeconds: 90 });
  } finally {
    llm.omitRetryAfter = false;
  }
});

test('a refused key is auth (OpenAI 401) and a 500 is unavailable', async () => {
  await expect(
    callLlm(http, call('openai', { api_key: 'nobody-knows-me', base_url: `${llm.baseUrl}/v1` })),
  ).rejects.toMatchObject({ kind: 'auth', message: expect.stringContaining('401') });
  llm.keys.set('broken', 'server_error');
  await expect(
    callLlm(http, call('anthropic', { api_key: 'broken', base_url: `${llm.baseUrl}/v1` })),
  ).rejects.toMatchObject({ kind: 'unavailable', message: expect.stringContaining('500') });
});

test('the SSRF guard refuses a private base URL before any request', async () => {
  const guarded = new OutboundClient({ allowHosts: [], userAgent: 'llm-adapters-test' });
  try {
    for (const provider of ['openai', 'anthropic', 'google_gemini', 'cohere'] as const) {
      const from = llm.requests.length;
      await expect(
        callLlm(guarded, call(provider, { api_key: 'k', base_url: `${llm.baseUrl}/v1` })),
      ).rejects.toMatchObject({
        kind: 'unavailable',
        message: expect.stringMatching(/is not allowed \(only public internet hosts/),
      });
      expect(llm.requests.length).toBe(from);
    }
  } finally {
    await guarded.close();
  }
});

test('a cancel aborts the call at once', async () => {
  const controller = new AbortController();
  controller.abort(new Error('cancelled by test'));
  await expect(
    callLlm(http, { ...call('openai', { api_key: 'x', base_url: `${llm.baseUrl}/v1` }), signal: controller.signal }),
  ).rejects.toThrow('cancelled by test');
});
