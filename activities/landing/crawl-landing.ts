import { ApplicationFailure, Context } from '@temporalio/activity';
import { JobResultStore } from '../../db/repositories/job-results';
import { crawlLandingPayload } from '../../jobs/crawl-landing';
import { HEARTBEAT_INTERVAL } from '../../jobs/limits';
import { parsePayload, type ActivityDeps, type JobActivityInput, type JobActivityOutput } from '../deps';
import { createLlmExtractor } from '../llm';
import { LandingBrowser } from './browser';
import { captureLanding, LandingCeilingError, LandingLoadError, type CaptureDeps } from './capture';

/**
 * The browser closes itself once idle (LANDING_BROWSER_IDLE_MS), and when the worker stops (deps.held).
 */
export function createLandingActivities(deps: ActivityDeps) {
  // Built on the first capture: a worker that never captures never holds a browser or an extractor.
  let captureDeps: CaptureDeps | undefined;
  const getCaptureDeps = (): CaptureDeps => {
    const { config } = deps;
    if (captureDeps) return captureDeps;
    const browser = new LandingBrowser(deps.http, config.CHROMIUM_PATH, config.LANDING_BROWSER_IDLE_MS);
    deps.held?.hold(() => browser.close());
    captureDeps = {
      browser,
      http: deps.http,
      storage: deps.storage,
      llm: createLlmExtractor(deps),
      userAgent: config.SITE_USER_AGENT,
      maxResourceBytes: config.LANDING_MAX_RESOURCE_BYTES,
      maxBundleBytes: config.LANDING_MAX_BUNDLE_BYTES,
      maxConcurrentSubresources: config.LANDING_MAX_CONCURRENT_SUBRESOURCES,
      maxCaptureBytes: config.LANDING_MAX_CAPTURE_BYTES,
      // As the mail worker's unsubscribe links: the API's public address, else its own HOST:PORT.
      apiBaseUrl: (config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/+$/, ''),
    };
    return captureDeps;
  };

  /**
   * crawlLanding job: captures `payload.url` in Chromium (activities/landing/capture.ts), stores
   * fold.png, full.png and page.html under landings/{job_id}/ in the client's media bucket and the
   * result row. Heartbeats every half second and at every step; a cancel closes the capture's browser
   * context at once. Idempotent: a retry overwrites the same objects and result row. A page that
   * cannot be loaded at all (DNS, refused, blocked by the SSRF guard) is a non-retryable failure;
   * everything short of that is a degradation listed in the result's errors.
   */
  async function crawlLanding(input: JobActivityInput): Promise<JobActivityOutput> {
    const payload = parsePayload(crawlLandingPayload, input.payload);
    const ctx = Context.current();
    let step = 'starting';
    const beat = setInterval(() => ctx.heartbeat({ step }), HEARTBEAT_INTERVAL.ms);
    try {
      ctx.heartbeat({ step });
      const data = await captureLanding(getCaptureDeps(), {
        jobId: input.jobId,
        clientId: input.clientId,
        payload,
        signal: ctx.cancellationSignal,
        onStep: (s) => {
          step = s;
          ctx.heartbeat({ step });
        },
      }).catch((err: unknown) => {
        if (err instanceof LandingLoadError) throw ApplicationFailure.nonRetryable(err.message, 'LandingUnreachable');
        // The same page would take as long again.
        if (err instanceof LandingCeilingError) throw ApplicationFailure.nonRetryable(err.message, 'LandingCeiling');
        throw err;
      });
      await new JobResultStore(deps.db, deps.storage).save(input.jobId, data);
      return { resultsCount: 1 };
    } finally {
      clearInterval(beat);
    }
  }

  return { crawlLanding };
}
