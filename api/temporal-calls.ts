import type { Temporal } from '../lib/temporal';

const TEMPORAL_CALL_TIMEOUT_MS = 5000;

/**
 * Temporal calls made while answering a request: each has a deadline (an unreachable Temporal is a
 * 503 within seconds, not a hung request), and shutdown waits for those still in flight (a
 * timed-out call may keep retrying until its deadline) before the connection closes.
 */
export class TemporalCalls {
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly temporal: Temporal) {}

  run<T>(fn: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + TEMPORAL_CALL_TIMEOUT_MS;
    const call = this.temporal.connection.withDeadline(deadline, fn);
    this.inFlight.add(call);
    void call.then(
      () => this.inFlight.delete(call),
      () => this.inFlight.delete(call),
    );
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('temporal call timed out')), TEMPORAL_CALL_TIMEOUT_MS);
      call.then(
        (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        (e: unknown) => {
          clearTimeout(timer);
          reject(e);
        },
      );
    });
  }

  /** Waits for the calls still in flight; call before closing the Temporal connection. */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
