import { z } from 'zod';
import { anyResult, httpUrl } from './fields';
import { MAX_JOB_DEADLINE, SITE_STAGE } from './limits';
import type { JobSpec } from './types';

/** crawlPeople payload (not shown in the spec). */
export const crawlPeoplePayload = z
  .strictObject({
    url: httpUrl('url').optional().describe('company website to look for people on'),
    company_name: z.string().trim().min(1).max(200).optional(),
    company_domain: z.string().trim().min(3).max(253).optional(),
    max_results: z.number().int().min(1).max(200).default(50),
  })
  .refine((p) => p.url ?? p.company_domain ?? p.company_name, { message: 'one of url, company_domain or company_name must be provided', path: [] });

/** crawlPeople: the people of a company. Worker side not built yet (501). */
export const crawlPeople: JobSpec<typeof crawlPeoplePayload> = {
  type: 'crawlPeople',
  summary: 'People of a company',
  payload: crawlPeoplePayload,
  result: anyResult,
  defaultPriority: 5,
  queue: 'crawl-people',
  limits: {
    activity: { ...SITE_STAGE, why: 'a site-like crawl of team pages: the site stage limit' },
    deadline: MAX_JOB_DEADLINE,
  },
  available: false,
  idapSource: 'crawl_people',
};
