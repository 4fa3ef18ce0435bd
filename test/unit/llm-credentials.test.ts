import { randomBytes } from 'node:crypto';
import { ConfigError, parseConfig } from '../../lib/config';
import { CredentialCipher } from '../../lib/llm/cipher';
import { checkCredentials, keyPreview, maskKey, PROVIDER_NAMES } from '../../lib/llm/providers';
import { costUsd, priceOf } from '../../lib/llm/prices';

const newKey = () => randomBytes(32).toString('base64');

describe('credential cipher', () => {
  test('seals with a fresh IV each time and opens only with the right key', () => {
    const cipher = new CredentialCipher(newKey());
    const a = cipher.seal('sk-secret-123');
    const b = cipher.seal('sk-secret-123');
    expect(a).not.toBe(b);
    expect(a).not.toContain('sk-secret');
    expect(cipher.open(a)).toBe('sk-secret-123');
    expect(() => new CredentialCipher(newKey()).open(a)).toThrow(/unknown key/);
  });

  test('a tampered value does not open (GCM tag)', () => {
    const cipher = new CredentialCipher(newKey());
    const sealed = cipher.seal('sk-secret-123');
    const raw = Buffer.from(sealed.split('.')[2] ?? '', 'base64');
    raw.writeUInt8((raw.readUInt8(raw.length - 1) + 1) % 256, raw.length - 1);
    expect(() => cipher.open(`${sealed.split('.').slice(0, 2).join('.')}.${raw.toString('base64')}`)).toThrow();
  });

  test('rotation: a previous key still opens old values, which then need re-sealing', () => {
    const oldKey = newKey();
    const sealed = new CredentialCipher(oldKey).seal('sk-old');
    const rotated = new CredentialCipher(newKey(), [oldKey]);
    expect(rotated.open(sealed)).toBe('sk-old');
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(rotated.isCurrent(rotated.seal('sk-old'))).toBe(true);
  });

  test('fingerprints are keyed: equal for equal credentials, different under another key or provider', () => {
    const key = newKey();
    const one = new CredentialCipher(key);
    expect(one.fingerprint('openai', 'sk-1')).toBe(new CredentialCipher(key).fingerprint('openai', 'sk-1'));
    expect(one.fingerprint('openai', 'sk-1')).not.toBe(one.fingerprint('groq', 'sk-1'));
    expect(one.fingerprint('openai', 'sk-1')).not.toBe(new CredentialCipher(newKey()).fingerprint('openai', 'sk-1'));
  });
});

describe('providers', () => {
  test('sixteen, lowercase snake_case', () => {
    expect(PROVIDER_NAMES).toHaveLength(16);
    for (const p of PROVIDER_NAMES) expect(p).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  test('key previews mask the key and show settings', () => {
    expect(maskKey('sk-proj-abcdefghijklmnopa1B2')).toBe('sk-...a1B2');
    expect(maskKey('AIzaSyD123456789XYZabcdefghijklmnopqrst')).toBe('AIz...qrst');
    // Never more than a quarter of the key: a 9-character key showed 7 ('abc...fghi').
    expect(maskKey('abcdefghi')).toBe('...hi');
    expect(maskKey('sk-abcdefghijkl1234')).toBe('...1234');
    expect(maskKey('short')).toBe('...');
    expect(keyPreview({ api_key: 'sk-abcdefghijklmnopqrstuvw1234', base_url: 'http://x/v1' })).toEqual({ api_key: 'sk-...1234', base_url: 'http://x/v1' });
  });

  test('credential shapes', () => {
    expect(checkCredentials('openai', { api_key: ' sk-1 ' })).toEqual({ ok: true, credentials: { api_key: 'sk-1' } });
    expect(checkCredentials('openai_compatible', { base_url: 'http://llm.internal:8000/v1/', model: 'm' })).toEqual({ ok: true, credentials: { base_url: 'http://llm.internal:8000/v1', model: 'm' } });
    expect(checkCredentials('openai', 'sk-1')).toEqual({ ok: false, error: 'credentials must be an object' });
    expect(checkCredentials('azure_openai', { api_key: 'k', endpoint: 'https://a.openai.azure.com', deployment: 'bad name' })).toMatchObject({ ok: false, error: expect.stringContaining('deployment') });
    expect(checkCredentials('ollama', { base_url: 'http://user:pw@o:11434/v1' })).toMatchObject({ ok: false, error: expect.stringContaining('must not carry a user') });
  });
});

test('prices: per integration over config over the built-in table; unknown models cost nothing', () => {
  expect(priceOf('gpt-4o-mini', {})).toEqual({ input: 0.15, output: 0.6 });
  expect(priceOf('gpt-4o-mini', { 'gpt-4o-mini': { input: 1, output: 2 } })).toEqual({ input: 1, output: 2 });
  expect(priceOf('gpt-4o-mini', { 'gpt-4o-mini': { input: 1, output: 2 } }, { input: 3, output: 4 })).toEqual({ input: 3, output: 4 });
  expect(priceOf('my-local-model', {})).toEqual({ input: 0, output: 0 });
  expect(costUsd({ input: 0.15, output: 0.6 }, 1_000_000, 500_000)).toBeCloseTo(0.45, 10);
});

describe('config', () => {
  const base = { MINIO_ACCESS_KEY: 'k', MINIO_SECRET_KEY: 's' };
  const message = (env: Record<string, string>) => {
    try {
      parseConfig(env);
      return '';
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
  };

  test('the encryption key is required in production, optional elsewhere, and must be 32 bytes of base64', () => {
    expect(message({ ...base, NODE_ENV: 'production' })).toMatch(/INTEGRATIONS_ENCRYPTION_KEY: required in production/);
    expect(parseConfig({ ...base, NODE_ENV: 'development' }).INTEGRATIONS_ENCRYPTION_KEY).toBeUndefined();
    expect(message({ ...base, INTEGRATIONS_ENCRYPTION_KEY: randomBytes(16).toString('base64') })).toMatch(/INTEGRATIONS_ENCRYPTION_KEY: must be 32 bytes/);
    expect(message({ ...base, INTEGRATIONS_ENCRYPTION_KEY: newKey(), INTEGRATIONS_PREVIOUS_KEYS: `${newKey()},nope` })).toMatch(/INTEGRATIONS_PREVIOUS_KEYS/);
    const key = newKey();
    // Production also needs the unsubscribe signing key (test/unit/unsubscribe-token.test.ts).
    expect(parseConfig({ ...base, NODE_ENV: 'production', INTEGRATIONS_ENCRYPTION_KEY: key, UNSUBSCRIBE_SIGNING_KEY: newKey() }).INTEGRATIONS_ENCRYPTION_KEY).toBe(key);
  });

  test('LLM_PRICES is JSON of USD per million tokens', () => {
    expect(parseConfig({ ...base, LLM_PRICES: '{"my-model": {"input": 0.5, "output": 1.5}}' }).LLM_PRICES).toEqual({ 'my-model': { input: 0.5, output: 1.5 } });
    expect(message({ ...base, LLM_PRICES: '{"my-model": {"input": "cheap"}}' })).toMatch(/LLM_PRICES: must be JSON/);
    expect(message({ ...base, LLM_PRICES: 'not json' })).toMatch(/LLM_PRICES: must be JSON/);
  });
});
