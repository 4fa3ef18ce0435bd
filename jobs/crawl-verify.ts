import { z } from 'zod';
import { anyResult } from './fields';
import { VERIFY_STAGE } from './limits';
import type { JobSpec } from './types';

/** crawlVerify payload (not shown in the spec: the addresses to verify). */
export const crawlVerifyPayload = z.strictObject({
  emails: z.array(z.string().trim().min(3).max(320)).min(1).max(1000),
  smtp_check: z.boolean().default(true).describe('probe the mailbox over SMTP (port 25); off = syntax, MX and lists only'),
});

/** crawlVerify: e-mail verification. Worker side not built yet (501). */
export const crawlVerify: JobSpec<typeof crawlVerifyPayload> = {
  type: 'crawlVerify',
  summary: 'Verify e-mail addresses',
  payload: crawlVerifyPayload,
  result: anyResult,
  defaultPriority: 5,
  queue: 'crawl-verify',
  limits: {
    activity: VERIFY_STAGE,
    deadline: { ms: 5 * 60_000, why: 'one 2-minute verify stage plus a retry after a lost worker' },
  },
  available: false,
  idapSource: 'crawl_verify',
};
