import { createHmac, randomBytes } from 'node:crypto';
import { ConfigError, parseConfig } from '../../lib/config';
import {
  listUnsubscribeHeaders,
  signUnsubscribeToken,
  unsubscribeSigningKey,
  unsubscribeUrl,
  verifyUnsubscribeToken,
} from '../../lib/unsubscribe';

const key = randomBytes(32);
const claims = { clientId: 'cli_abc', email: 'Alice@Example.COM ', list: 'newsletter' };

describe('unsubscribe tokens', () => {
  test('a signed token verifies to its claims, the address lower-cased', () => {
    const token = signUnsubscribeToken(key, claims);
    expect(verifyUnsubscribeToken(key, token)).toEqual({
      clientId: 'cli_abc',
      email: 'alice@example.com',
      list: 'newsletter',
    });
  });

  test('tokens are URL-safe and differ each time (random nonce), and all of them verify', () => {
    const tokens = Array.from({ length: 20 }, () => signUnsubscribeToken(key, claims));
    expect(new Set(tokens).size).toBe(20);
    for (const t of tokens) {
      expect(t).toMatch(/^[A-Za-z0-9_.-]+$/);
      expect(encodeURIComponent(t)).toBe(t);
      expect(verifyUnsubscribeToken(key, t)?.email).toBe('alice@example.com');
    }
  });

  test('another key, a changed payload or signature, and junk are refused', () => {
    const token = signUnsubscribeToken(key, claims);
    const [payload, mac] = token.split('.') as [string, string];
    expect(verifyUnsubscribeToken(randomBytes(32), token)).toBeNull();
    // The same claims for another list, signed by nobody: the payload decodes but the MAC does not fit.
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), l: 'offers' }),
    ).toString('base64url');
    expect(verifyUnsubscribeToken(key, `${forged}.${mac}`)).toBeNull();
    const flipped = mac.slice(0, 10) + (mac[10] === 'A' ? 'B' : 'A') + mac.slice(11);
    expect(verifyUnsubscribeToken(key, `${payload}.${flipped}`)).toBeNull();
    // The last character carries two spare bits: another spelling of the same MAC bytes is refused as well.
    const respelled = `${mac.slice(0, -1)}${String.fromCharCode(mac.charCodeAt(42) + 1)}`;
    expect(Buffer.from(respelled, 'base64url').equals(Buffer.from(mac, 'base64url'))).toBe(true);
    expect(verifyUnsubscribeToken(key, `${payload}.${respelled}`)).toBeNull();
    for (const junk of [
      '',
      '.',
      'abc',
      `${payload}.`,
      `.${mac}`,
      `${payload}.${mac}.x`,
      `${payload}%2e${mac}`,
      'x'.repeat(5000),
    ]) {
      expect(verifyUnsubscribeToken(key, junk)).toBeNull();
    }
  });

  test('a correctly signed payload that is not a token of ours is refused', () => {
    const payload = Buffer.from(JSON.stringify({ v: 1, c: 'cli_abc', e: 'a@b.c', l: '*', n: 'x'.repeat(22) })).toString(
      'base64url',
    );
    const mac = createHmac('sha256', key).update(payload).digest('base64url');
    expect(verifyUnsubscribeToken(key, `${payload}.${mac}`)).toBeNull();
  });

  test('list names are checked and short keys refused', () => {
    expect(() => signUnsubscribeToken(key, { ...claims, list: '*' })).toThrow(/list name/);
    expect(() => signUnsubscribeToken(key, { ...claims, list: 'a b' })).toThrow(/list name/);
    expect(() => signUnsubscribeToken(randomBytes(16), claims)).toThrow(/at least 32 bytes/);
  });

  test('the URL is the base plus /u/{token}', () => {
    expect(unsubscribeUrl('https://mail.example.com/', 'tok.en')).toBe('https://mail.example.com/u/tok.en');
    expect(unsubscribeUrl('http://127.0.0.1:8080', 'x.y')).toBe('http://127.0.0.1:8080/u/x.y');
    expect(listUnsubscribeHeaders('https://mail.example.com/u/x.y')).toEqual({
      'List-Unsubscribe': '<https://mail.example.com/u/x.y>',
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    });
  });
});

describe('UNSUBSCRIBE_SIGNING_KEY', () => {
  const base = { MINIO_ACCESS_KEY: 'a', MINIO_SECRET_KEY: 'b' };
  test('optional outside production, required in production, at least 32 bytes of base64', () => {
    expect(unsubscribeSigningKey(parseConfig(base))).toBeUndefined();
    const k = randomBytes(48).toString('base64');
    expect(unsubscribeSigningKey(parseConfig({ ...base, UNSUBSCRIBE_SIGNING_KEY: k }))?.length).toBe(48);
    expect(() => parseConfig({ ...base, UNSUBSCRIBE_SIGNING_KEY: randomBytes(16).toString('base64') })).toThrow(
      /UNSUBSCRIBE_SIGNING_KEY: must be at least 32 bytes/,
    );
    expect(() => parseConfig({ ...base, UNSUBSCRIBE_SIGNING_KEY: 'not base64!' })).toThrow(ConfigError);
    const prod = { ...base, NODE_ENV: 'production', INTEGRATIONS_ENCRYPTION_KEY: randomBytes(32).toString('base64') };
    expect(() => parseConfig(prod)).toThrow(/UNSUBSCRIBE_SIGNING_KEY: required in production/);
    expect(() => parseConfig({ ...prod, UNSUBSCRIBE_SIGNING_KEY: k })).not.toThrow();
  });
});
