/**
 * When a submission must count its task queue's queued jobs for the capacity check
 * (QUEUE_CAPACITY_*). That count reads every queued job of the queue, so its cost grows with the
 * backlog; far below the capacity a count at most `maxAgeMs` old, plus the jobs this process
 * queued since, says enough. Submissions count exactly when there is no such count, or when it is
 * within `margin` of the capacity; each exact count refreshes the estimate. Once the count is
 * stale, one submission per queue recounts while the others go on with the old estimate (a herd
 * of them all counting a long backlog at once cost a loaded Postgres a tenth of the submissions);
 * near the capacity every submission still counts. The limit is therefore exact unless other API
 * processes queue more than `margin` jobs within about `maxAgeMs` (500 jobs in a second at the
 * default 5,000 of crawlSite).
 */
export class QueueDepthEstimate {
  private readonly known = new Map<string, { queued: number; at: number }>();
  /** Queues a submission is recounting, since when (a recount that never reports expires after maxAgeMs). */
  private readonly recounting = new Map<string, number>();

  constructor(
    private readonly maxAgeMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * True when this submission to `queue` must count its queued jobs exactly; the caller then
   * calls countSettled once its submission is over, whatever came of it.
   */
  mustCount(queue: string, capacity: number): boolean {
    const known = this.known.get(queue);
    if (!known) return true;
    if (known.queued >= capacity - margin(capacity)) return true;
    const now = this.now();
    if (now - known.at <= this.maxAgeMs) return false;
    const since = this.recounting.get(queue);
    if (since !== undefined && now - since <= this.maxAgeMs) return false;
    this.recounting.set(queue, now);
    return true;
  }

  /**
   * After a submission to `queue`: `counted` is the exact count it made (before its own job), or
   * null when it made none; `created` whether it queued a job.
   */
  record(queue: string, counted: number | null, created: boolean): void {
    const add = created ? 1 : 0;
    if (counted !== null) {
      this.known.set(queue, { queued: counted + add, at: this.now() });
      return;
    }
    const known = this.known.get(queue);
    if (known) known.queued += add;
  }

  /** A submission that mustCount sent to count is over (counted, answered from the cache, or failed). */
  countSettled(queue: string): void {
    this.recounting.delete(queue);
  }
}

/** How far below the capacity counting starts: a tenth of it, at least 100 jobs. */
export function margin(capacity: number): number {
  return Math.max(100, Math.ceil(capacity / 10));
}
