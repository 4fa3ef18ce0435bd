import { z } from 'zod';
import { anyResult, httpUrl } from './fields';
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
      viewport: z.strictObject({ width: z.number().int().min(320).max(3840), height: z.number().int().min(320).max(2160) }).default({ width: 1366, height: 768 }),
      timeout_seconds: z.number().int().min(3).max(90).default(45),
      max_redirects: z.number().int().min(0).max(20).default(10),
    })
    .prefault({}),
});

/** crawlLanding: landing-page capture. Worker side not built yet (501). */
export const crawlLanding: JobSpec<typeof crawlLandingPayload> = {
  type: 'crawlLanding',
  summary: 'Capture a landing page: screenshots, self-contained HTML, redirect chain, optional AI extraction',
  payload: crawlLandingPayload,
  result: anyResult,
  defaultPriority: 5,
  queue: 'crawl-landing',
  limits: {
    activity: { ms: 3 * 60_000, why: 'spec §8: capture takes 3-90 s; room for the uploads after a 90 s page' },
    deadline: { ms: 6 * 60_000, why: 'one capture plus a retry after a lost worker' },
  },
  submitRoute: 'typed',
  available: false,
  idapSource: 'crawl_landing',
};
