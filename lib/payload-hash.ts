import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';

/** sha256 of the payload with keys sorted: equal payloads hash equally whatever their key order. */
export function payloadHash(payload: Record<string, unknown>): string {
  return createHash('sha256')
    .update(stringify(payload) ?? '')
    .digest('hex');
}
