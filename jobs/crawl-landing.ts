import { z } from 'zod';
import { domainOf } from '../lib/normalize';
import { httpUrl, isoTime } from './fields';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';

/** crawlLanding payload (spec §4.1 rule 5). */
export const crawlLandingPayload = z.strictObject({
  url: httpUrl('url'),
  ad_id: z.string().max(200).optional(),
  test: z.boolean().default(false),
  options: z
    .strictObject({
      capture_screenshot: z.boolean().default(true),
      capture_full_page: z.boolean().default(true),
      capture_html_bundle: z.boolean().default(true),
      extract_content: z.boolean().default(false),
      dismiss_popups: z.boolean().default(true),
      scroll_for_lazy_load: z.boolean().default(true),
      viewport: z
        .strictObject({ width: z.number().int().min(320).max(3840), height: z.number().int().min(320).max(2160) })
        .default({ width: 1366, height: 768 }),
      timeout_seconds: z
        .number()
        .int()
        .min(3)
        .max(90)
        .default(45)
        .describe(
          'how long the page may take to load and settle, counted from the navigation; what loaded by then is kept',
        ),
      max_redirects: z.number().int().min(0).max(20).default(10),
    })
    .prefault({}),
});

export type CrawlLandingPayload = z.infer<typeof crawlLandingPayload>;

export const LANDING_ERROR_STAGES = [
  'navigation',
  'popups',
  'scroll',
  'screenshot_fold',
  'screenshot_full',
  'html_bundle',
  'storage',
  'extraction',
] as const;
const landingError = z.object({ stage: z.enum(LANDING_ERROR_STAGES), error: z.string() });
export type LandingError = z.infer<typeof landingError>;

/**
 * The policy of every stored capture document (issue 38 item 5): no script, plugin, frame, form
 * submission or base URL; its own styles and images, and images, fonts and media left as links.
 * Written into the document as its first element (a meta policy holds wherever the file is opened,
 * the media bucket included) and sent by the API's capture route with `sandbox` added.
 */
export const CAPTURE_POLICY =
  "default-src 'none'; img-src data: http: https:; style-src 'unsafe-inline' data: http: https:; font-src data: http: https:; media-src data: http: https:; form-action 'none'; base-uri 'none'";

/** The API path that renders a capture's page.html sandboxed (api/routes/captures.ts); html_bundle_url is this under the API's public address. */
export const captureViewPath = (clientId: string, jobId: string): string =>
  `/api/v1/captures/${encodeURIComponent(clientId)}/landings/${encodeURIComponent(jobId)}/page.html`;

const hosted = (what: string) =>
  z
    .string()
    .nullable()
    .describe(
      `${what}: {MEDIA_PUBLIC_URL}/{bucket}/landings/{job_id}/...; null when not asked for or not captured (see errors)`,
    );

export const crawlLandingResult = z
  .object({
    capture: z.object({
      initial_url: z.string(),
      final_url: z.string().describe('the page shown after every redirect'),
      redirect_chain: z
        .array(z.string())
        .describe(
          'every main-frame navigation from initial_url to final_url: HTTP 30x hops, meta refreshes, script redirects',
        ),
      screenshot_fold_url: hosted('fold.png, the first viewport'),
      screenshot_full_url: hosted('full.png, the whole page'),
      html_bundle_url: z
        .string()
        .nullable()
        .describe(
          'page.html, self-contained (CSS inlined, images as data URIs, no scripts), rendered sandboxed: {PUBLIC_BASE_URL}/api/v1/captures/{client_id}/landings/{job_id}/page.html, which the API serves with Content-Security-Policy: sandbox (no script runs, in an origin of its own). ' +
            'The copy in the media bucket ({MEDIA_PUBLIC_URL}/{bucket}/landings/{job_id}/page.html) is a download (Content-Disposition: attachment) and forbids script itself (docs/security.md). Null when not asked for or not captured (see errors)',
        ),
      captured_at: isoTime,
    }),
    ad_id: z.string().nullable(),
    extracted: z
      .object({
        meta: z.object({
          title: z.string().nullable(),
          description: z.string().nullable(),
          og_image: z.string().nullable(),
        }),
        content: z.object({
          headline: z.string().nullable(),
          subheadline: z.string().nullable(),
          cta_primary: z
            .object({ text: z.string(), url: z.string().nullable(), style: z.string().nullable() })
            .nullable(),
          value_propositions: z.array(z.string()),
          testimonials: z.array(
            z.object({ quote: z.string(), author: z.string().nullable(), title: z.string().nullable() }),
          ),
          trust_signals: z.array(z.string()),
        }),
        design: z.object({
          layout_type: z.string().nullable(),
          color_palette: z.array(z.string()).describe('hex colours by painted area, largest first'),
          font_families: z.array(z.string()).describe('by amount of text set in them'),
          has_video: z.boolean(),
          has_chat_widget: z.boolean(),
          form_fields: z.array(z.string()).describe('labels of the form fields'),
        }),
        ai: z
          .object({
            integration_id: z.number().int().describe('the id of GET /api/v1/integrations/{integration_id}'),
            provider: z.string(),
            model: z.string(),
          })
          .describe('the integration that answered'),
      })
      .nullable()
      .describe(
        'null when extract_content is off, or no LLM integration is usable, or the LLM call failed (reason in errors)',
      ),
    errors: z.array(landingError).describe('non-fatal degradations (spec §7 rule 5)'),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'CrawlLandingResult', description: 'crawlLanding (spec §2.5)' });
export type CrawlLandingResult = z.infer<typeof crawlLandingResult>;

/** crawlLanding: landing-page capture in Chromium (activities/landing/). */
export const crawlLanding: JobSpec<typeof crawlLandingPayload> = {
  type: 'crawlLanding',
  summary: 'Capture a landing page: screenshots, self-contained HTML, redirect chain, optional AI extraction',
  payload: crawlLandingPayload,
  result: crawlLandingResult,
  defaultPriority: 5,
  queue: 'crawl-landing',
  limits: {
    activity: { ms: 3 * 60_000, why: 'spec §8: capture takes 3-90 s; room for the uploads after a 90 s page' },
    deadline: { ms: 6 * 60_000, why: 'one capture plus a retry after a lost worker' },
  },
  submitRoute: 'typed',
  available: true,
  idapSource: 'crawl_landing',
  project: (result, job) => projectLanding(result, job),
};

/**
 * crawlLanding: a `landing` note (where the ad leads, the hosted captures) on the business of the
 * final page's domain. Only an existing business gets it (`existingOnly`): a landing page is no lead.
 * The latest capture wins, whichever job finishes last (`newerOnly`).
 */
function projectLanding(r: Obj, job: { jobId: string }): Projection {
  const b = new ProjectionBuilder();
  const capture = isObj(r.capture) ? r.capture : {};
  const finalUrl = str(capture.final_url) ?? str(capture.initial_url);
  const domain = domainOf(finalUrl);
  if (!finalUrl || !domain) return b.build('crawl_landing');
  b.add(
    'businesses',
    {
      domain,
      landing: {
        job_id: job.jobId,
        url: finalUrl,
        initial_url: str(capture.initial_url),
        redirect_chain: list(capture.redirect_chain)
          .map(str)
          .filter((u): u is string => !!u),
        ad_id: str(r.ad_id),
        screenshot_fold_url: str(capture.screenshot_fold_url),
        screenshot_full_url: str(capture.screenshot_full_url),
        html_bundle_url: str(capture.html_bundle_url),
        captured_at: str(capture.captured_at),
      },
    },
    { existingOnly: true, newerOnly: { field: 'landing', at: 'captured_at' } },
  );
  return b.build('crawl_landing');
}
