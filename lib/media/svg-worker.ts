import type { Worker } from 'node:worker_threads';
import { startThread } from '../threads';
import { InvalidSvgError, type SanitizedSvg } from './svg';
import type { SvgReply, SvgRequest } from './svg-thread';

/** Sanitising did not finish within its deadline; the thread doing it was stopped. */
export class SvgTimeoutError extends Error {}

/**
 * Runs sanitizeSvg (lib/media/svg.ts) in a worker thread, one document at a time, so that a costly
 * SVG never holds the API's event loop: other requests of every tenant are answered meanwhile. A
 * document still being sanitised after `timeoutMs` fails with SvgTimeoutError and its thread is
 * terminated (a synchronous parse cannot be interrupted any other way); the next document starts a
 * fresh thread. The thread is unref'd and ends after a minute without work.
 */
export class SvgSanitizer {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private nextId = 0;
  // One document at a time: a second upload waits for the thread rather than starting another
  // jsdom (tens of MB each).
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly timeoutMs: number) {}

  sanitize(text: string): Promise<SanitizedSvg> {
    const run = this.queue.then(() => this.run(text));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Stops the thread (API shutdown); a later sanitize starts another. */
  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    const w = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    await w?.terminate();
  }

  private thread(): { worker: Worker; ready: Promise<void> } {
    clearTimeout(this.idleTimer);
    if (this.worker && this.ready) return { worker: this.worker, ready: this.ready };
    const worker = startThread(__dirname, 'svg-thread', __filename);
    worker.unref();
    const ready = new Promise<void>((resolve, reject) => {
      const onReady = (m: unknown) => {
        if ((m as { ready?: boolean }).ready) resolve();
      };
      worker.on('message', onReady);
      worker.once('error', reject);
      worker.once('exit', () => reject(new Error('the sanitiser thread stopped while starting')));
    });
    // Reported to the document waiting for it; this only keeps an early failure from going unhandled.
    ready.catch(() => undefined);
    const forget = () => {
      if (this.worker === worker) {
        this.worker = undefined;
        this.ready = undefined;
      }
    };
    worker.on('error', forget);
    worker.on('exit', forget);
    this.worker = worker;
    this.ready = ready;
    return { worker, ready };
  }

  private async run(text: string): Promise<SanitizedSvg> {
    const { worker, ready } = this.thread();
    try {
      await ready;
    } catch (err) {
      throw new InvalidSvgError(
        `it could not be processed: ${err instanceof Error ? err.message : String(err)}`.slice(0, 300),
      );
    }
    const id = ++this.nextId;
    return new Promise<SanitizedSvg>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        this.idleTimer = setTimeout(() => void this.close(), 60_000).unref();
      };
      const onMessage = (reply: SvgReply | { ready: true }) => {
        if (!('id' in reply) || reply.id !== id) return;
        done();
        if ('svg' in reply) resolve({ svg: reply.svg, removed: reply.removed });
        else if ('invalid' in reply) reject(new InvalidSvgError(reply.invalid));
        else reject(new InvalidSvgError(`it could not be processed: ${reply.failed}`.slice(0, 300)));
      };
      const onError = (err: Error) => {
        done();
        // The thread died on this document (out of memory, say): the uploader's SVG cannot be processed.
        reject(new InvalidSvgError(`it could not be processed: ${err.message}`.slice(0, 300)));
      };
      const onExit = () => {
        done();
        reject(new InvalidSvgError('it could not be processed: the sanitiser stopped'));
      };
      const timer = setTimeout(() => {
        done();
        if (this.worker === worker) {
          this.worker = undefined;
          this.ready = undefined;
        }
        void worker.terminate();
        reject(new SvgTimeoutError(`sanitising it took longer than ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, text } satisfies SvgRequest);
    });
  }
}
