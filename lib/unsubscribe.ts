import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/**
 * Unsubscribe tokens (spec §4.12): the capability behind `/u/{token}`. A token binds one client,
 * one recipient and one list; it is `<payload>.<mac>`, both base64url, where the payload is a
 * small JSON object with a random nonce (so two tokens for the same recipient differ and none can
 * be guessed from the claims) and the MAC is HMAC-SHA256 of the payload text under
 * UNSUBSCRIBE_SIGNING_KEY. Tokens do not expire: a link in an old mail must keep working.
 */
export interface UnsubscribeClaims {
  clientId: string;
  /** Normalised: trimmed, lower-case. */
  email: string;
  /** A list name such as `newsletter`; never `*` (that is "everything", chosen on the page). */
  list: string;
}

/** Smallest signing key accepted (bytes): HMAC-SHA256's own block of security. */
export const MIN_SIGNING_KEY_BYTES = 32;
/** List names: what a mail sender would write, nothing that needs escaping in a URL or a header. */
export const LIST_NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;
/** The preference row that stands for "every list" (never a list name: LIST_NAME refuses it). */
export const ALL_LISTS = '*';

const VERSION = 1;
const payloadSchema = z.strictObject({
  v: z.literal(VERSION),
  c: z.string().min(1).max(200),
  e: z.string().min(3).max(320),
  l: z.string().regex(LIST_NAME),
  n: z.string().min(16).max(64),
});

export const normaliseEmail = (email: string): string => email.trim().toLowerCase();

const mac = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest();

function checkKey(key: Buffer): void {
  if (key.length < MIN_SIGNING_KEY_BYTES)
    throw new Error(`the unsubscribe signing key must be at least ${MIN_SIGNING_KEY_BYTES} bytes`);
}

export function signUnsubscribeToken(key: Buffer, claims: UnsubscribeClaims): string {
  checkKey(key);
  const list = claims.list.trim().toLowerCase();
  if (!LIST_NAME.test(list)) throw new Error(`invalid list name ${JSON.stringify(claims.list)}`);
  const body = {
    v: VERSION,
    c: claims.clientId,
    e: normaliseEmail(claims.email),
    l: list,
    n: randomBytes(16).toString('base64url'),
  };
  const payload = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/** The claims of a token this key signed, or null for anything else (malformed, tampered, another key). */
export function verifyUnsubscribeToken(key: Buffer, token: string): UnsubscribeClaims | null {
  checkKey(key);
  if (token.length > 2048) return null;
  const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]{43})$/.exec(token);
  if (!m || m[1] === undefined || m[2] === undefined) return null;
  // Compared as text: a non-canonical spelling of the same MAC bytes (the last character's spare bits) is refused too.
  const given = Buffer.from(m[2], 'ascii');
  const expected = Buffer.from(mac(key, m[1]).toString('base64url'), 'ascii');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(m[1], 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  const parsed = payloadSchema.safeParse(json);
  if (!parsed.success) return null;
  return { clientId: parsed.data.c, email: parsed.data.e, list: parsed.data.l };
}

/** The page's address: `${base}/u/${token}` (a trailing slash of the base is dropped). */
export function unsubscribeUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/u/${token}`;
}

/** The key from its base64 text (config UNSUBSCRIBE_SIGNING_KEY), or undefined when unset. */
export function unsubscribeSigningKey(config: { UNSUBSCRIBE_SIGNING_KEY?: string | undefined }): Buffer | undefined {
  return config.UNSUBSCRIBE_SIGNING_KEY === undefined
    ? undefined
    : Buffer.from(config.UNSUBSCRIBE_SIGNING_KEY, 'base64');
}

/** The headers of a mail that carries the link (RFC 2369 List-Unsubscribe, RFC 8058 one-click POST). */
export function listUnsubscribeHeaders(url: string): { 'List-Unsubscribe': string; 'List-Unsubscribe-Post': string } {
  return { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}
