import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** Uniform random characters from ALPHABET (rejection sampling, no modulo bias). */
export function randomToken(length: number, alphabet = ALPHABET): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export interface IssuedCredentials {
  client_id: string;
  api_key: string;
  api_secret: string;
}

/** Spec §5.2: cli_… (public), sk_… 50 characters, secret_… 55 characters. */
export function issueCredentials(): IssuedCredentials {
  return {
    client_id: `cli_${randomToken(24, 'abcdefghijklmnopqrstuvwxyz0123456789')}`,
    api_key: `sk_${randomToken(47)}`,
    api_secret: `secret_${randomToken(48)}`,
  };
}

export function hashSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash. */
export function secretMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashSecret(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
