import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError, parseConfig } from '../../lib/config';
import { CredentialCipher } from '../../lib/llm/cipher';
import { checkCredentials, keyPreview, maskKey, PROVIDER_NAMES } from '../../lib/llm/providers';
import { costUsd, priceOf } from '../../lib/llm/prices';

const newKey = () => randomBytes(32).toString('base64');

describe('credential cipher', () => {
  // Where a value is stored: it opens only there (AES-GCM associated data).
  const at = { table: 'llm_integrations', column: 'credentials_sealed', clientId: 'cli_a', rowId: 1 };

  /** A value as the cipher sealed it before it bound values to their rows: `v1.`, no associated data. */
  function sealV1(key: string, plaintext: string): string {
    const raw = Buffer.from(key, 'base64');
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', raw, iv);
    const body = Buffer.concat([c.update(plaintext, 'utf8'), c.final()]);
    return `v1.${createHash('sha256').update(raw).digest('hex').slice(0, 8)}.${Buffer.concat([iv, c.getAuthTag(), body]).toString('base64')}`;
  }

  test('seals with a fresh IV each time and opens only with the right key', () => {
    const cipher = new CredentialCipher(newKey());
    const a = cipher.seal('sk-secret-123', at);
    const b = cipher.seal('sk-secret-123', at);
    expect(a).not.toBe(b);
    expect(a).not.toContain('sk-secret');
    expect(cipher.open(a, at)).toBe('sk-secret-123');
    expect(() => new CredentialCipher(newKey()).open(a, at)).toThrow(/unknown key/);
  });

  test('a tampered value does not open (GCM tag)', () => {
    const cipher = new CredentialCipher(newKey());
    const sealed = cipher.seal('sk-secret-123', at);
    const raw = Buffer.from(sealed.split('.')[2] ?? '', 'base64');
    raw.writeUInt8((raw.readUInt8(raw.length - 1) + 1) % 256, raw.length - 1);
    expect(() => cipher.open(`${sealed.split('.').slice(0, 2).join('.')}.${raw.toString('base64')}`, at)).toThrow();
  });

  test('a value moved to another row, client, column or table does not open there (associated data)', () => {
    const cipher = new CredentialCipher(newKey());
    const sealed = cipher.seal('sk-victim', at);
    for (const elsewhere of [
      { ...at, rowId: 2 },
      { ...at, clientId: 'cli_b' },
      { ...at, column: 'other' },
      { ...at, table: 'webhooks' },
    ]) {
      expect(() => cipher.open(sealed, elsewhere)).toThrow(/sealed for another row or client/);
    }
    expect(cipher.open(sealed, at)).toBe('sk-victim');
  });

  test('a v1 value (sealed before values were bound to rows) still opens, and needs re-sealing, which binds it', () => {
    const key = newKey();
    const cipher = new CredentialCipher(key);
    const legacy = sealV1(key, 'sk-old');
    expect(cipher.open(legacy, at)).toBe('sk-old');
    expect(cipher.isCurrent(legacy)).toBe(false);
    const resealed = cipher.seal(cipher.open(legacy, at), at);
    expect(resealed.startsWith(`v2.${cipher.keyId}.`)).toBe(true);
    expect(cipher.isCurrent(resealed)).toBe(true);
    expect(() => cipher.open(resealed, { ...at, rowId: 9 })).toThrow();
  });

  test('rotation: a previous key still opens old values, which then need re-sealing', () => {
    const oldKey = newKey();
    const sealed = new CredentialCipher(oldKey).seal('sk-old', at);
    const rotated = new CredentialCipher(newKey(), [oldKey]);
    expect(rotated.open(sealed, at)).toBe('sk-old');
    expect(rotated.isCurrent(sealed)).toBe(false);
    expect(rotated.isCurrent(rotated.seal('sk-old', at))).toBe(true);
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
    expect(keyPreview({ api_key: 'sk-abcdefghijklmnopqrstuvw1234', base_url: 'http://x/v1' })).toEqual({
      api_key: 'sk-...1234',
      base_url: 'http://x/v1',
    });
  });

  test('credential shapes', () => {
    expect(checkCredentials('openai', { api_key: ' sk-1 ' })).toEqual({ ok: true, credentials: { api_key: 'sk-1' } });
    expect(checkCredentials('openai_compatible', { base_url: 'http://llm.internal:8000/v1/', model: 'm' })).toEqual({
      ok: true,
      credentials: { base_url: 'http://llm.internal:8000/v1', model: 'm' },
    });
    expect(checkCredentials('openai', 'sk-1')).toEqual({ ok: false, error: 'credentials must be an object' });
    expect(
      checkCredentials('azure_openai', {
        api_key: 'k',
        endpoint: 'https://a.openai.azure.com',
        deployment: 'bad name',
      }),
    ).toMatchObject({ ok: false, error: expect.stringContaining('deployment') });
    expect(checkCredentials('ollama', { base_url: 'http://user:pw@o:11434/v1' })).toMatchObject({
      ok: false,
      error: expect.stringContaining('must not carry a user'),
    });
  });
});

test('prices: per integration over config over the built-in table; unknown models cost nothing', () => {
  expect(priceOf('gpt-4o-mini', {})).toEqual({ input: 0.15, output: 0.6 });
  expect(priceOf('gpt-4o-mini', { 'gpt-4o-mini': { input: 1, output: 2 } })).toEqual({ input: 1, output: 2 });
  expect(priceOf('gpt-4o-mini', { 'gpt-4o-mini': { input: 1, output: 2 } }, { input: 3, output: 4 })).toEqual({
    input: 3,
    output: 4,
  });
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
    expect(message({ ...base, INTEGRATIONS_ENCRYPTION_KEY: randomBytes(16).toString('base64') })).toMatch(
      /INTEGRATIONS_ENCRYPTION_KEY: must be 32 bytes/,
    );
    expect(
      message({ ...base, INTEGRATIONS_ENCRYPTION_KEY: newKey(), INTEGRATIONS_PREVIOUS_KEYS: `${newKey()},nope` }),
    ).toMatch(/INTEGRATIONS_PREVIOUS_KEYS/);
    const key = newKey();
    // Production also needs the unsubscribe signing key (test/unit/unsubscribe-token.test.ts).
    expect(
      parseConfig({
        ...base,
        NODE_ENV: 'production',
        INTEGRATIONS_ENCRYPTION_KEY: key,
        UNSUBSCRIBE_SIGNING_KEY: newKey(),
      }).INTEGRATIONS_ENCRYPTION_KEY,
    ).toBe(key);
  });

  test('LLM_PRICES is JSON of USD per million tokens', () => {
    expect(parseConfig({ ...base, LLM_PRICES: '{"my-model": {"input": 0.5, "output": 1.5}}' }).LLM_PRICES).toEqual({
      'my-model': { input: 0.5, output: 1.5 },
    });
    expect(message({ ...base, LLM_PRICES: '{"my-model": {"input": "cheap"}}' })).toMatch(/LLM_PRICES: must be JSON/);
    expect(message({ ...base, LLM_PRICES: 'not json' })).toMatch(/LLM_PRICES: must be JSON/);
  });
});
