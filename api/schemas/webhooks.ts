import { z } from 'zod';
import { EVENT_NAMES } from '../../jobs';
import { hasCredentials, HTTP_URL_PATTERN, isHttpUrl } from '../../jobs/fields';
import { uuidParam } from './params';

// ---- requests -------------------------------------------------------------------------------

const httpUrl = z
  .string()
  .trim()
  .max(2000)
  .refine((v) => isHttpUrl(v) && !hasCredentials(v), {
    message: 'must be an http:// or https:// URL without credentials',
  })
  .meta({ pattern: HTTP_URL_PATTERN })
  .describe(
    'where deliveries are POSTed; checked against private and loopback addresses at each delivery (SSRF guard)',
  );

export const webhookCreateBody = z.strictObject({
  url: httpUrl,
  events: z
    .array(z.enum(EVENT_NAMES))
    .min(1)
    .max(EVENT_NAMES.length)
    .transform((events) => [...new Set(events)])
    .describe(`event names to deliver: ${EVENT_NAMES.join(', ')}`),
  description: z.string().trim().max(500).optional(),
});

export const webhookIdParams = z.object({ webhook_id: uuidParam('webhook id (UUID)') });

export const webhookListQuery = z.object({
  page: z.coerce.number().int().min(1).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(50),
});

// ---- responses ------------------------------------------------------------------------------

const webhookFields = {
  webhook_id: z.string().uuid(),
  url: z.string(),
  events: z.array(z.enum(EVENT_NAMES)),
  description: z.string().nullable(),
  active: z
    .boolean()
    .describe(
      'false once disabled after WEBHOOK_DISABLE_AFTER_FAILURES failed attempts in a row (a webhook.disabled event says so)',
    ),
  consecutive_failures: z.number().int().describe('failed attempts since the last delivered one'),
  created_at: z.string(),
};

export const webhookResponse = z.object(webhookFields).meta({ id: 'Webhook' });

export const webhookCreatedResponse = z
  .object({ ...webhookFields, secret: z.string().describe('the signing secret: shown in this response only, keep it') })
  .meta({ id: 'WebhookCreated' });

export const webhookListResponse = z
  .object({
    webhooks: z.array(webhookResponse),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
  })
  .meta({ id: 'WebhookList' });

export const webhookDeliveriesResponse = z
  .object({
    deliveries: z.array(
      z.object({
        delivery_id: z.string().uuid().describe('the `id` of the delivered body, the same on every attempt'),
        event: z.enum(EVENT_NAMES),
        event_id: z.number().int().describe("the event's id on the SSE stream"),
        status: z
          .enum(['pending', 'delivered', 'failed', 'cancelled'])
          .describe('pending while attempts go on (24 h at most); cancelled when the webhook was disabled first'),
        attempts: z.array(
          z.object({
            attempt: z.number().int(),
            status_code: z.number().int().nullable().describe("the receiver's HTTP status; null when there was none"),
            error: z
              .string()
              .nullable()
              .describe('why no answer came (timeout, refused, blocked by the SSRF guard, ...)'),
            duration_ms: z.number().int(),
            at: z.string(),
          }),
        ),
        created_at: z.string(),
        delivered_at: z.string().nullable(),
      }),
    ),
    total: z.number().int(),
    page: z.number().int(),
    page_size: z.number().int(),
  })
  .meta({ id: 'WebhookDeliveries' });
