import { createHash } from 'node:crypto';
import type { OutboundClient } from './outbound';
import type { Storage } from './storage';

/** Image types the service hosts, with their file extensions. */
export const IMAGE_TYPES: Readonly<Record<string, string>> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/gif': 'gif',
};

const MAX_IMAGE_BYTES = 10 * 1024 * 1024;

export interface HostedImage {
  url: string;
  /** sha256 of the bytes, hex: the object's key. */
  contentHash: string;
}

/**
 * Fetches an image through the SSRF-guarded client and stores it in the client's public media
 * bucket under `<folder>/<sha256>.<ext>`: the same picture is one object however often (or by how
 * many retries) it is stored. Undefined when the source answers no image (not 200, or not one of
 * IMAGE_TYPES); fetch and storage errors reject (a cancel with the signal's reason).
 */
export async function hostImage(
  deps: { http: OutboundClient; storage: Storage },
  clientId: string,
  source: string,
  folder: string,
  signal: AbortSignal,
  headers: Record<string, string> = {},
): Promise<HostedImage | undefined> {
  const res = await deps.http.fetch(source, { signal, maxBytes: MAX_IMAGE_BYTES, headers });
  const type = (res.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const ext = IMAGE_TYPES[type];
  if (res.status !== 200 || !ext) return undefined;
  const hash = createHash('sha256').update(res.body).digest('hex');
  const stored = await deps.storage.put(clientId, `${folder}/${hash}.${ext}`, res.body, type);
  return { url: stored.url, contentHash: hash };
}
