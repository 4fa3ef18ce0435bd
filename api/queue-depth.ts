/**
 * When a submission must count its task queue's queued jobs for the capacity check
 * (QUEUE_CAPACITY_*). That count reads every queued job of the queue, so its cost grows with the
 * backlog; far below the capacity a count at most `maxAgeMs` old, plus the jobs this process
 * queued since, says enough. Submissions count exactly when there is no such count, or when it is
 * within `margin` of the capacity; each exact count refreshes the estimate. The limit is therefore
 * exact unless other API processes queue more than `margin` jobs within `maxAgeMs` (500 jobs in a
 * second at the default 5,000 of crawlSite).
 */
export class QueueDepthEstimate {
  private readonly known = new Map<string, { queued: number; at: number }>();

  constructor(
    private readonly maxAgeMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  /** True when this submission to `queue` must count its queued jobs exactly. */
  mustCount(queue: string, capacity: number): boolean {
    const known = this.known.get(queue);
    if (!known || this.now() - known.at > this.maxAgeMs) return true;
    return known.queued >= capacity - margin(capacity);
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
}

/** How far below the capacity counting starts: a tenth of it, at least 100 jobs. */
export function margin(capacity: number): number {
  return Math.max(100, Math.ceil(capacity / 10));
}
