import { z } from 'zod';
import { anyResult, httpUrl } from './fields';
import type { JobSpec } from './types';

/** crawlPublicSocial payload (spec §4.1 rule 6). */
export const crawlPublicSocialPayload = z
  .strictObject({
    username: z.string().trim().regex(/^@?[A-Za-z0-9._]{1,30}$/, 'username may hold letters, digits, . and _ (at most 30)').optional(),
    profile_url: httpUrl('profile_url').optional(),
    platform: z.enum(['instagram']).default('instagram'),
  })
  .refine((p) => p.username !== undefined || p.profile_url !== undefined, { message: 'either username or profile URL must be provided', path: [] });

/** crawlPublicSocial: a public social profile. Worker side not built yet (501). */
export const crawlPublicSocial: JobSpec<typeof crawlPublicSocialPayload> = {
  type: 'crawlPublicSocial',
  summary: 'Public profile data of a social-platform account, without logging in',
  payload: crawlPublicSocialPayload,
  result: anyResult,
  defaultPriority: 5,
  queue: 'crawl-public-social',
  limits: {
    activity: { ms: 2 * 60_000, why: 'one profile, with the 3-10 s politeness delay between its requests (spec §8)' },
    deadline: { ms: 5 * 60_000, why: 'one profile plus retries after a rate limit' },
  },
  submitRoute: 'typed',
  available: false,
  // Not among the spec's IDAP sources (§4.5): profiles it finds are recorded as imports.
  idapSource: 'import',
};
