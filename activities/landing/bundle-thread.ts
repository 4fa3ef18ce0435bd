/**
 * The worker thread's side of bundle-worker.ts: builds one bundle (or plain snapshot) and exits.
 * Only data crosses: the HTML in, each resource it needs asked of the parent by URL (which answers
 * from the capture's cache or the guarded network), the stored HTML or the refusal out.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { CachedResponse } from './browser';
import { BundleTooLargeError, bundleHtml, plainSnapshot } from './bundle';

export type BundleJob =
  { kind: 'bundle'; html: string; baseUrl: string; maxBytes: number } | { kind: 'plain'; html: string };
/** Thread to parent. */
export type BundleMessage =
  { load: number; url: string } | { html: string; missing: string[] } | { tooLarge: number } | { failed: string };
/** Parent to thread: the answer to a `load`. */
export type LoadAnswer = { loaded: number; res: { status: number; contentType: string; body: Uint8Array } | null };

const job = workerData as BundleJob;
const pending = new Map<number, (res: CachedResponse | null) => void>();
let nextId = 0;
parentPort?.on('message', ({ loaded, res }: LoadAnswer) => {
  const resolve = pending.get(loaded);
  pending.delete(loaded);
  // A Buffer arrives as a plain Uint8Array: the bundle reads it as a Buffer.
  resolve?.(res ? { ...res, body: Buffer.from(res.body.buffer, res.body.byteOffset, res.body.byteLength) } : null);
});
const load = (url: string) =>
  new Promise<CachedResponse | null>((resolve) => {
    const id = ++nextId;
    pending.set(id, resolve);
    parentPort?.postMessage({ load: id, url } satisfies BundleMessage);
  });

const run = async (): Promise<BundleMessage> => {
  try {
    if (job.kind === 'plain') return { html: plainSnapshot(job.html), missing: [] };
    return await bundleHtml(job.html, job.baseUrl, new Map(), load, job.maxBytes);
  } catch (err) {
    if (err instanceof BundleTooLargeError) return { tooLarge: err.maxBytes };
    return { failed: err instanceof Error ? err.message : String(err) };
  }
};
void run().then((m) => {
  parentPort?.postMessage(m);
  parentPort?.close();
});
