import { z } from 'zod';
import { filterReason } from '../lib/directory-domains';
import { domainOf } from '../lib/normalize';
import { parseUsername, profileUrlOf, usernameFromProfileUrl } from '../lib/social-url';
import { MAX_JOB_DEADLINE } from './limits';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';

/**
 * crawlPublicSocial payload (spec §4.1 rule 6): `username` or `profile_url`, one required. A profile
 * URL is read as its username (www/m hosts, instagr.am, `_u/` links, trailing slashes, share
 * parameters); one that names no profile (a post, another site) is refused here, at submission.
 */
export const crawlPublicSocialPayload = z
  .strictObject({
    username: z.string().trim().max(31).optional().describe('the account name, with or without @'),
    profile_url: z
      .string()
      .trim()
      .max(2000)
      .optional()
      .describe('a profile URL such as https://www.instagram.com/<username>/'),
    platform: z.enum(['instagram']).default('instagram'),
  })
  .superRefine((p, ctx) => {
    if (p.username === undefined && p.profile_url === undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'either username or profile URL must be provided' });
      return;
    }
    if (p.username !== undefined) {
      const parsed = parseUsername(p.username);
      if ('error' in parsed) ctx.addIssue({ code: 'custom', path: ['username'], message: parsed.error });
    }
    if (p.profile_url !== undefined) {
      const parsed = usernameFromProfileUrl(p.profile_url);
      if ('error' in parsed) ctx.addIssue({ code: 'custom', path: ['profile_url'], message: parsed.error });
    }
  })
  .meta({ anyOf: [{ required: ['username'] }, { required: ['profile_url'] }] });
export type CrawlPublicSocialPayload = z.infer<typeof crawlPublicSocialPayload>;

export const crawlPublicSocialResult = z
  .object({
    username: z.string(),
    full_name: z.string().describe('empty when the account shows none'),
    bio: z.string().describe('empty for private profiles'),
    profile_pic_url: z.string().nullable().describe('source CDN URL (the HD one when offered), may expire'),
    profile_pic_url_hosted: z
      .string()
      .nullable()
      .describe(
        'permanent hosted URL {MEDIA_PUBLIC_URL}/{bucket}/social/profile-pics/<sha256>.<ext>; null when the picture could not be stored',
      ),
    external_url: z.string().nullable().describe('bio link; null for private profiles'),
    follower_count: z.number().int(),
    following_count: z.number().int(),
    post_count: z.number().int(),
    is_business_account: z.boolean(),
    is_professional_account: z.boolean(),
    is_private: z.boolean(),
    is_verified: z.boolean(),
    business_category: z.string().nullable().describe('business accounts only'),
    business_email: z.string().nullable().describe('business accounts only'),
    business_phone: z.string().nullable().describe('business accounts only'),
    bio_emails: z.array(z.string()).describe('addresses written in the bio'),
    bio_phones: z.array(z.string()).describe('numbers written in the bio, E.164 (libphonenumber)'),
    metadata: z.object({
      social_id: z.string().describe("the platform's account id"),
      source: z.string().describe('the endpoint that answered: instagram web_profile_info'),
      has_hosted_image: z.boolean(),
    }),
  })
  .meta({ id: 'CrawlPublicSocialResult', description: 'crawlPublicSocial (spec §2.6)' });
export type CrawlPublicSocialResult = z.infer<typeof crawlPublicSocialResult>;

/** The rate-limited queue of profile requests, as the workflow looks it up (RunJobInput.queues). */
export const SOCIAL_QUEUE_KEY = 'social';

/** crawlPublicSocial: a public profile, without logging in (activities/social/, steps in workflows/social.ts). */
export const crawlPublicSocial: JobSpec<typeof crawlPublicSocialPayload> = {
  type: 'crawlPublicSocial',
  summary: 'Public profile data of a social-platform account, without logging in',
  payload: crawlPublicSocialPayload,
  result: crawlPublicSocialResult,
  defaultPriority: 5,
  queue: 'crawl-public-social',
  steps: 'crawlPublicSocialSteps',
  /**
   * Spec §8: about 200 requests per hour per IP. Every profile request is one activity on this queue,
   * whose dispatch rate Temporal enforces for all workers together; the randomised delay between
   * requests (SOCIAL_DELAY_MIN_MS..MAX_MS) comes on top, and the activity holds the hourly rate
   * itself at the request (activities/pacing.ts), whenever the worker starts it.
   */
  activityQueues: (config) => [
    { key: SOCIAL_QUEUE_KEY, queue: 'social-profiles', perSecond: config.SOCIAL_REQUESTS_PER_HOUR / 3600 },
  ],
  limits: {
    activity: {
      ms: 60_000,
      why: 'one profile request after the 3-10 s politeness delay, or storing the result and its picture',
    },
    // A throttled profile is retried for SOCIAL_RETRY_WINDOW_SECONDS (default 10 minutes), within the spec's 10-minute cap.
    deadline: MAX_JOB_DEADLINE,
  },
  submitRoute: 'typed',
  available: true,
  // Not among the spec's IDAP sources (§4.5): profiles it finds are recorded as imports.
  idapSource: 'import',
  project: (result, job) => projectSocial(result, job),
};

/**
 * crawlPublicSocial: the profile on the business of its bio link's domain (`instagram_profile`,
 * created or merged by domain; a bio link to a social network or link directory names no
 * business), with the bio's and the business contact's e-mails and phones related to it.
 */
function projectSocial(r: Obj, job: { jobId: string }): Projection {
  const b = new ProjectionBuilder();
  const username = str(r.username);
  if (!username) return b.build('import');
  const external = str(r.external_url);
  const domain = domainOf(external);
  const meta = isObj(r.metadata) ? r.metadata : {};
  let business: number | undefined;
  if (external && domain && !filterReason(external)) {
    business = b.add('businesses', {
      website: new URL(external).origin,
      domain,
      instagram_profile: {
        url: profileUrlOf(username),
        username,
        full_name: str(r.full_name),
        social_id: str(meta.social_id),
        follower_count: r.follower_count,
        post_count: r.post_count,
        is_verified: r.is_verified,
        business_category: str(r.business_category),
        profile_pic_url: str(r.profile_pic_url_hosted) ?? str(r.profile_pic_url),
        job_id: job.jobId,
      },
    });
  }
  const emails = new Set(
    [...list(r.bio_emails).map(str), str(r.business_email)].filter((e): e is string => !!e && e.includes('@')),
  );
  for (const address of emails)
    b.relate(
      business,
      b.add('emails', { address, domain: address.split('@')[1] ?? null, verified: null, verification_status: null }),
    );
  const phones = new Set([...list(r.bio_phones).map(str), str(r.business_phone)].filter((p): p is string => !!p));
  for (const number of phones) b.relate(business, b.add('phones', { number, raw: number }));
  return b.build('import');
}
