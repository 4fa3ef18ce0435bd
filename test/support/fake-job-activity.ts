import { ApplicationFailure, Context } from '@temporalio/activity';
import type { JobActivityInput, JobActivityOutput } from '../../activities';
import { JobResultStore } from '../../db/repositories/job-results';

/**
 * A test double for a job-type activity (no job type exists yet; the engine is type-agnostic).
 * Its behaviour comes from the payload URL's query: sleep_ms (heartbeating, cancellable),
 * fail=<message> (permanent failure), results=<n>. It stores its result like a real one.
 */
export function fakeJobActivity(results: JobResultStore, log: { startedAt?: Map<string, number>; cancelledAt?: Map<string, number> } = {}) {
  return async function fakeCrawl(input: JobActivityInput): Promise<JobActivityOutput> {
    const url = new URL(String(input.payload.url));
    const sleepMs = Number(url.searchParams.get('sleep_ms') ?? 0);
    const ctx = Context.current();
    log.startedAt?.set(input.jobId, Date.now());
    const until = Date.now() + sleepMs;
    try {
      while (Date.now() < until) {
        ctx.heartbeat();
        await ctx.sleep(Math.min(100, until - Date.now()));
      }
    } catch (err) {
      log.cancelledAt?.set(input.jobId, Date.now());
      throw err;
    }
    const fail = url.searchParams.get('fail');
    if (fail) throw ApplicationFailure.nonRetryable(fail, 'Unreachable');
    const n = Number(url.searchParams.get('results') ?? 1);
    const emails = Array.from({ length: n }, (_, i) => `lead${i}@${url.hostname}`);
    await results.save(input.jobId, { url: url.toString(), pages_crawled: n, emails, attempt: ctx.info.attempt });
    return { resultsCount: n };
  };
}
