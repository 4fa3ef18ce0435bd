import { startThread, ThreadPool, ThreadTimeoutError } from '../threads';
import { InvalidSvgError, type SanitizedSvg } from './svg';
import type { SvgReply } from './svg-thread';

/** Sanitising did not finish within its deadline; the thread doing it was stopped. */
export class SvgTimeoutError extends Error {}

/**
 * Runs sanitizeSvg (lib/media/svg.ts) in a worker thread, one document at a time, so that a costly
 * SVG never holds the API's event loop: other requests of every tenant are answered meanwhile. A
 * document still being sanitised after `timeoutMs` fails with SvgTimeoutError and its thread is
 * terminated (a synchronous parse cannot be interrupted any other way); the next document starts a
 * fresh thread. One thread (a second upload waits for it rather than starting another jsdom, tens
 * of MB each), unref'd while idle and ended after a minute without work (lib/threads.ts ThreadPool).
 */
export class SvgSanitizer {
  private readonly pool: ThreadPool<string, SvgReply>;

  constructor(private readonly timeoutMs: number) {
    this.pool = new ThreadPool(() => startThread(__dirname, 'svg-thread', __filename), {
      size: 1,
      timeoutMs,
      idleMs: 60_000,
    });
  }

  async sanitize(text: string): Promise<SanitizedSvg> {
    let reply: SvgReply;
    try {
      reply = await this.pool.run(text);
    } catch (err) {
      if (err instanceof ThreadTimeoutError)
        throw new SvgTimeoutError(`sanitising it took longer than ${this.timeoutMs} ms`);
      // The document's own failure, or the thread died on it (out of memory, say): it cannot be processed.
      throw new InvalidSvgError(
        `it could not be processed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300),
      );
    }
    if ('invalid' in reply) throw new InvalidSvgError(reply.invalid);
    return reply;
  }

  /** Stops the thread (API shutdown). */
  async close(): Promise<void> {
    await this.pool.close();
  }
}
