import { startThread, ThreadPool } from '../../lib/threads';
import type { ActivityDeps } from '../deps';
import { processPage, type PageFacts, type PageOptions } from './page';
import type { PageTask } from './page-thread';

/** Reads one fetched page: the parse and every extractor (processPage). */
export type PageReader = (html: string, url: string, options: PageOptions, signal: AbortSignal) => Promise<PageFacts>;

/** processPage on the caller's event loop, after a turn of it (answers that came in and requests that are due go first). */
export const readOnLoop: PageReader = async (html, url, options) => {
  await new Promise<void>((resolve) => setImmediate(resolve));
  return processPage(html, url, options);
};

/**
 * A page still being read after this long fails ("page not readable") and its thread is
 * terminated; the crawl goes on. The slowest of 1,550 real pages took 174 ms (bench:pipeline). A
 * read still runs when the crawl's time limit strikes (4.5 min), and must end within the activity's
 * remaining 30 s with the compendium's upload.
 */
export const PAGE_READ_TIMEOUT_MS = 10_000;

/** processPage in up to `threads` worker threads (activities/site/page-thread.ts). */
export function pageThreads(threads: number): {
  read: PageReader;
  warm: () => Promise<void>;
  close: () => Promise<void>;
} {
  const pool = new ThreadPool<PageTask, PageFacts>(() => startThread(__dirname, 'page-thread', __filename), {
    size: threads,
    timeoutMs: PAGE_READ_TIMEOUT_MS,
  });
  return {
    read: (html, url, options, signal) => pool.run({ html, url, options }, signal),
    warm: () => pool.warm(),
    close: () => pool.close(),
  };
}

const readers = new WeakMap<object, PageReader>();

/**
 * The worker's page reader: SITE_PAGE_THREADS threads shared by every crawl of the process (the
 * pool starts with the first page read and closes when the worker stops, deps.held), or the
 * activity's own event loop when it is 0.
 */
export function pageReaderOf(deps: Pick<ActivityDeps, 'config' | 'held'>): PageReader {
  const threads = deps.config.SITE_PAGE_THREADS;
  if (threads === 0) return readOnLoop;
  const key = deps.held ?? deps;
  let reader = readers.get(key);
  if (!reader) {
    const pool = pageThreads(threads);
    deps.held?.hold(pool.close);
    reader = pool.read;
    readers.set(key, reader);
  }
  return reader;
}
