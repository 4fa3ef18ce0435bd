import { startThread } from '../../lib/threads';
import type { CachedResponse } from './browser';
import { BundleTooLargeError, bundleHtml, plainSnapshot, type BundleOutcome, type ResourceLoader } from './bundle';
import type { BundleJob, BundleMessage, LoadAnswer } from './bundle-thread';

/**
 * Pages up to this size are bundled on the activity's event loop (about 0.3 s of parsing and
 * serialising at most, measured on this 2-core machine); larger ones in a worker thread. A page near
 * LANDING_MAX_BUNDLE_BYTES (20 MiB) held the loop 5 to 12 s there (issue 38 item 10: heartbeats
 * every 500 ms, a cancel within 3 s), and a synchronous parse cannot be interrupted otherwise.
 */
export const BUNDLE_IN_THREAD_BYTES = 512 * 1024;

/**
 * bundleHtml, off the event loop for a large page: the thread asks for each resource by URL and
 * `cached` or `load` answers it here. A cancel (`signal`) terminates the thread at once.
 */
export function bundleOffLoop(
  html: string,
  baseUrl: string,
  cached: Map<string, CachedResponse>,
  load: ResourceLoader,
  maxBytes: number,
  signal: AbortSignal,
): Promise<BundleOutcome> {
  if (Buffer.byteLength(html) <= BUNDLE_IN_THREAD_BYTES) return bundleHtml(html, baseUrl, cached, load, maxBytes);
  return inThread(
    { kind: 'bundle', html, baseUrl, maxBytes },
    async (url) => cached.get(url) ?? (await load(url)),
    signal,
  );
}

/** plainSnapshot, off the event loop for a large page. */
export async function plainSnapshotOffLoop(html: string, signal: AbortSignal): Promise<string> {
  if (Buffer.byteLength(html) <= BUNDLE_IN_THREAD_BYTES) return plainSnapshot(html);
  return (await inThread({ kind: 'plain', html }, async () => null, signal)).html;
}

function inThread(job: BundleJob, load: ResourceLoader, signal: AbortSignal): Promise<BundleOutcome> {
  signal.throwIfAborted();
  const worker = startThread(__dirname, 'bundle-thread', __filename, { workerData: job });
  return new Promise<BundleOutcome>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      void worker.terminate();
      outcome();
    };
    const onAbort = () => finish(() => reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: BundleMessage) => {
      if ('load' in m) {
        void load(m.url)
          .catch(() => null)
          .then((res) => {
            if (!settled) worker.postMessage({ loaded: m.load, res } satisfies LoadAnswer);
          });
      } else if ('html' in m) finish(() => resolve({ html: m.html, missing: m.missing }));
      else if ('tooLarge' in m) finish(() => reject(new BundleTooLargeError(m.tooLarge)));
      else finish(() => reject(new Error(m.failed)));
    });
    worker.once('error', (err) => finish(() => reject(err)));
    worker.once('exit', () => finish(() => reject(new Error('the bundle thread stopped'))));
  });
}
