import { z } from 'zod';
import { trimmedEmail } from '../../jobs/fields';
import { LIST_NAME } from '../../lib/unsubscribe';

// ---- requests -------------------------------------------------------------------------------

const email = trimmedEmail()
  .transform((v) => v.toLowerCase())
  .describe('the recipient (compared case-insensitively)');

export const unsubscribeLinkBody = z.strictObject({
  email,
  list: z
    .string()
    .trim()
    .toLowerCase()
    .regex(LIST_NAME, 'must be a list name: 1-64 of a-z 0-9 . _ -, starting with a letter or digit')
    .describe('the mailing list the link leaves, e.g. newsletter ("all lists" is a choice on the page)'),
});

export const unsubscribePreferencesQuery = z.object({ email });

export const unsubscribeTokenParams = z.object({ token: z.string().describe('the signed token of the link') });

// ---- responses ------------------------------------------------------------------------------

export const unsubscribeLinkResponse = z
  .object({
    token: z
      .string()
      .describe('signed (HMAC-SHA256), bound to the client, the recipient and the list; carries a random nonce'),
    url: z
      .string()
      .describe(
        '`{PUBLIC_BASE_URL}/u/{token}`: for the mail body and the List-Unsubscribe header (with List-Unsubscribe-Post: List-Unsubscribe=One-Click)',
      ),
  })
  .meta({ id: 'UnsubscribeLink' });

export const unsubscribePreferencesResponse = z
  .object({
    email: z.string(),
    unsubscribed_all: z.boolean().describe('true once the recipient chose "all mailing lists"'),
    lists: z
      .record(z.string(), z.object({ status: z.enum(['subscribed', 'unsubscribed']), updated_at: z.string() }))
      .describe('every list a link was made for or the recipient left'),
    audit: z
      .array(
        z.object({
          list: z.string().describe('the list of the link used'),
          scope: z.enum(['list', 'all']),
          source: z
            .enum(['page', 'one_click'])
            .describe('page: the confirmation page; one_click: an RFC 8058 List-Unsubscribe-Post request'),
          ip_address: z.string().nullable(),
          user_agent: z.string().nullable(),
          created_at: z.string(),
        }),
      )
      .describe('every unsubscribe request, newest first (at most 100)'),
  })
  .meta({ id: 'UnsubscribePreferences' });

export const htmlPage = z.string().describe('an HTML page');
