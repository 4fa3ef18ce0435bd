import { z } from 'zod';
import { hasControlCharacter, NO_CONTROL_CHARACTERS } from '../lib/emails';
import { VERIFY_STAGE } from './limits';
import { isObj, list, ProjectionBuilder, str, type Obj, type Projection } from './projection';
import type { JobSpec } from './types';

/** Seconds of the 2-minute verify stage kept for the result's storage after the last probe. */
export const VERIFY_RESERVE_SECONDS = 10;
const MAX_ADDRESS_SECONDS = VERIFY_STAGE.ms / 1000 - VERIFY_RESERVE_SECONDS;

// Control characters are refused here, with the field named, rather than reported per address:
// a CR or LF in an address is an attempt at SMTP command injection, not a typo.
const address = z
  .string()
  .trim()
  .min(3)
  .max(320)
  .refine((v) => !hasControlCharacter(v), NO_CONTROL_CHARACTERS);

/**
 * crawlVerify payload (the spec leaves it open): `emails` (1-1000) or `email`, or both (merged).
 * Duplicates, also when written differently (case, Unicode or punycode domain), are verified once.
 */
export const crawlVerifyPayload = z
  .strictObject({
    emails: z.array(address).min(1).max(1000).optional().describe('1-1000 addresses'),
    email: address.optional().describe('one address (instead of or besides emails)'),
    smtp_check: z
      .boolean()
      .default(true)
      .describe('probe the mailbox over SMTP (port 25); false: syntax, DNS and lists only'),
    timeout_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_ADDRESS_SECONDS)
      .default(30)
      .describe(
        "time allowed per address (DNS and SMTP, greylisting retries included; waiting for a session slot at a busy mail server does not count); the whole job shares the verify stage's 2 minutes, and an address still open then is unknown",
      ),
  })
  .superRefine((p, ctx) => {
    if (p.emails === undefined && p.email === undefined)
      ctx.addIssue({ code: 'custom', path: ['emails'], message: 'emails (1-1000 addresses) or email is required' });
    if ((p.emails?.length ?? 0) + (p.email === undefined ? 0 : 1) > 1000)
      ctx.addIssue({ code: 'custom', path: ['emails'], message: 'at most 1000 addresses per job' });
  })
  .meta({ anyOf: [{ required: ['emails'] }, { required: ['email'] }] });
export type CrawlVerifyPayload = z.infer<typeof crawlVerifyPayload>;

export const VERIFY_STATUSES = ['valid', 'risky', 'invalid', 'unknown'] as const;
export type VerifyStatus = (typeof VERIFY_STATUSES)[number];

/** How `score` is computed; the same text is in docs/api.md (Jobs, crawlVerify). */
export const SCORE_RULES =
  'invalid: 0. Otherwise a base of 100 when the mail server accepted the mailbox (RCPT TO), 40 when it could not be asked ' +
  '(unknown, or smtp_check false), then minus 30 for a catch-all domain, 40 for a disposable provider, 50 for a full mailbox, ' +
  '15 for a role account and 5 for a free provider, clamped to 0-100.';

export const verifyResultItem = z.object({
  email: z
    .string()
    .describe(
      'the address as verified: trimmed, lower-cased, the domain in Unicode (the form crawled addresses are reported in)',
    ),
  status: z
    .enum(VERIFY_STATUSES)
    .describe(
      'valid (safe to send), risky (accepted but catch-all, disposable, role or full), invalid, unknown (could not tell: see reason)',
    ),
  score: z.number().int().min(0).max(100).describe(SCORE_RULES),
  is_deliverable: z.boolean().describe('the mail server accepted RCPT TO for the address'),
  is_free_email: z.boolean(),
  is_disposable: z.boolean(),
  is_role_account: z.boolean(),
  is_catch_all: z.boolean().describe('the server also accepted a random mailbox of the domain'),
  mx: z.string().nullable().describe('the mail server asked (or that would be asked), null when the domain has none'),
  reason: z
    .string()
    .describe("why the status: the server's answer, the list that matched, or why it could not be told"),
});
export type VerifyResultItem = z.infer<typeof verifyResultItem>;

export const crawlVerifyResult = z
  .object({
    results: z.array(verifyResultItem).describe('one per distinct address, in the order first given'),
    summary: z.object({
      valid: z.number().int(),
      risky: z.number().int(),
      invalid: z.number().int(),
      unknown: z.number().int(),
    }),
  })
  .meta({ id: 'CrawlVerifyResult', description: 'crawlVerify' });
export type CrawlVerifyResult = z.infer<typeof crawlVerifyResult>;

/** crawlVerify: e-mail verification by syntax, DNS, lists and an SMTP probe (activities/verify/). */
export const crawlVerify: JobSpec<typeof crawlVerifyPayload> = {
  type: 'crawlVerify',
  summary: 'Verify e-mail addresses: syntax, MX, disposable/free/role lists and an SMTP mailbox probe',
  payload: crawlVerifyPayload,
  result: crawlVerifyResult,
  defaultPriority: 5,
  queue: 'crawl-verify',
  limits: {
    activity: VERIFY_STAGE,
    deadline: { ms: 5 * 60_000, why: 'one 2-minute verify stage plus a retry after a lost worker' },
  },
  submitRoute: 'typed',
  available: true,
  idapSource: 'crawl_verify',
  project: (result) => projectVerify(result),
};

/**
 * crawlVerify: each address as an IDAP email resource carrying its verdict. `verified` is true only
 * for `valid` (the lead index's email_verified); the store relates and re-indexes the businesses
 * of those addresses.
 */
function projectVerify(r: Obj): Projection {
  const b = new ProjectionBuilder();
  for (const item of list(r.results).filter(isObj)) {
    const email = str(item.email);
    if (!email?.includes('@')) continue;
    b.add('emails', {
      address: email,
      domain: email.slice(email.lastIndexOf('@') + 1),
      verified: item.status === 'valid',
      verification_status: str(item.status),
      score: typeof item.score === 'number' ? item.score : null,
      verification_reason: str(item.reason),
      is_disposable: item.is_disposable === true,
      is_free_email: item.is_free_email === true,
      is_role_account: item.is_role_account === true,
      is_catch_all: item.is_catch_all === true,
      mx: str(item.mx),
    });
  }
  return b.build('crawl_verify');
}
