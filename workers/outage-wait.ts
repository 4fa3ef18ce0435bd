import { Context } from '@temporalio/activity';
import type {
  ActivityExecuteInput,
  ActivityInboundCallsInterceptor,
  ActivityInterceptorsFactory,
  Next,
} from '@temporalio/worker';
import { HEARTBEAT_INTERVAL } from '../jobs/limits';
import { unavailableDependency, type Dependency } from '../lib/outages';
import { withTimeout } from '../lib/timeout';

/** Whether a backing service answers again (the same probes as the API's health check). */
export type DependencyProbes = Partial<Record<Dependency, () => Promise<void>>>;

export interface OutageWaitOptions {
  probes: DependencyProbes;
  /** The longest an attempt waits for its dependency before it fails as it would have. */
  maxWaitMs: number;
}

const PROBE_EVERY_MS = 1000;

/**
 * An attempt that failed because a backing service (Postgres, MinIO, Elasticsearch) does not answer
 * waits, heartbeating, until that service answers its probe again, and only then fails for Temporal
 * to retry. A restart of a dependency thus costs a job one attempt, not all of them: retried at once
 * with backoff, a job's three attempts would all be spent within an 8-second Postgres restart and
 * the job failed with "connect ECONNREFUSED". The wait stops at a cancel (Context.sleep rejects
 * then) and at `maxWaitMs`, and never outlives the attempt's own timeout: an outage that outlasts it
 * fails the attempt as before.
 */
export class OutageWaitInterceptor implements ActivityInboundCallsInterceptor {
  constructor(
    private readonly ctx: Context,
    private readonly options: OutageWaitOptions,
  ) {}

  async execute(input: ActivityExecuteInput, next: Next<ActivityInboundCallsInterceptor, 'execute'>): Promise<unknown> {
    try {
      return await next(input);
    } catch (err) {
      const dependency = unavailableDependency(err);
      const probe = dependency ? this.options.probes[dependency] : undefined;
      // A cancel during the wait ends the attempt as cancelled, as the activity itself would have.
      const cancelled = probe ? await this.waitFor(probe) : undefined;
      throw cancelled ?? err;
    }
  }

  /** Waits until the probe answers, the time is up or the attempt is cancelled (then its cancellation). */
  private async waitFor(probe: () => Promise<void>): Promise<unknown> {
    const { info } = this.ctx;
    const scheduledEnd = info.startToCloseTimeoutMs
      ? info.currentAttemptScheduledTimestampMs + info.startToCloseTimeoutMs
      : Infinity;
    // Leave the attempt a few seconds to report its failure before its own timeout.
    const until = Math.min(Date.now() + this.options.maxWaitMs, scheduledEnd - 5000);
    // A cancel reaches the attempt only in a heartbeat's answer, and a probe of a service that takes
    // connections but does not answer hangs for its whole timeout: heartbeats go out on a timer of
    // their own, and the probe is raced with the cancellation.
    const beat = setInterval(() => this.ctx.heartbeat(), HEARTBEAT_INTERVAL.ms);
    const cancellation = this.ctx.cancelled.then(
      () => undefined,
      (cancelled: unknown) => ({ cancelled }),
    );
    try {
      while (Date.now() < until) {
        this.ctx.heartbeat();
        const answered = withTimeout(probe(), PROBE_EVERY_MS * 2, 'the probe').then(
          () => true,
          () => false, // Still down.
        );
        const outcome = await Promise.race([answered, cancellation]);
        if (typeof outcome === 'object') return outcome.cancelled;
        if (outcome) return undefined;
        try {
          await this.ctx.sleep(PROBE_EVERY_MS);
        } catch (cancelled) {
          return cancelled;
        }
      }
      return undefined;
    } finally {
      clearInterval(beat);
    }
  }
}

/** The worker's activity interceptor: see OutageWaitInterceptor. */
export function outageWait(options: OutageWaitOptions): ActivityInterceptorsFactory {
  return (ctx) => ({ inbound: new OutageWaitInterceptor(ctx, options) });
}
