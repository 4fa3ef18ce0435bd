import type { WebhookRepository, WebhookRow } from '../../db/repositories/webhooks';
import { notFound } from '../../lib/errors';
import { clientIdOf } from '../context';
import type { ApiRouter } from '../routing';
import {
  webhookCreateBody,
  webhookCreatedResponse,
  webhookDeliveriesResponse,
  webhookIdParams,
  webhookListQuery,
  webhookListResponse,
  webhookResponse,
} from '../schemas/webhooks';
import { UUID } from '../../lib/ids';
import type { Logger } from '../../lib/logger';
import { iso } from '../../lib/dates';

/** Never the secret: it is shown once, in the create response. */
function webhookView(w: WebhookRow) {
  return {
    webhook_id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    active: w.active,
    consecutive_failures: w.consecutive_failures,
    created_at: new Date(w.created_at).toISOString(),
  };
}

/** `taskQueue`: this deployment's webhooks queue (jobs/queues.ts), recorded with each webhook. */
export function webhookRoutes(api: ApiRouter, repo: WebhookRepository, taskQueue: string, logger: Logger): void {
  if (!repo.sealsSecrets)
    logger.warn('INTEGRATIONS_ENCRYPTION_KEY is not set: new webhook signing secrets are stored in plaintext');
  // Another client's webhook and a malformed id are the same answer: no such webhook.
  const own = async (clientId: string, id: string) => {
    const hook = UUID.test(id) ? await repo.find(clientId, id) : undefined;
    if (!hook) throw notFound('webhook not found');
    return hook;
  };

  api.add({
    method: 'post',
    path: '/api/v1/webhooks',
    operationId: 'createWebhook',
    summary: 'Subscribe a URL to events',
    description:
      'Each event of a subscribed name is POSTed as JSON `{id, event, created_at, data}` with the headers ' +
      '`X-Leadjobs-Event` and `X-Leadjobs-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. ' +
      'A 2xx answer within 10 s delivers it; otherwise it is retried with exponential backoff for 24 h, with the same `id`. ' +
      'The secret is in this response only (the server stores it encrypted when INTEGRATIONS_ENCRYPTION_KEY is set).',
    tags: ['webhooks'],
    security: 'client',
    body: webhookCreateBody,
    responses: { 201: { description: 'Created, with its signing secret', schema: webhookCreatedResponse } },
    handler: async (ctx, { body }) => {
      const { webhook, secret } = await repo.create(clientIdOf(ctx), taskQueue, {
        url: body.url,
        events: body.events,
        description: body.description,
      });
      ctx.status = 201;
      ctx.body = { ...webhookView(webhook), secret };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/webhooks',
    operationId: 'listWebhooks',
    summary: 'List webhooks, newest first',
    tags: ['webhooks'],
    security: 'client',
    query: webhookListQuery,
    responses: { 200: { description: 'A page of webhooks (no secrets)', schema: webhookListResponse } },
    handler: async (ctx, { query }) => {
      const { total, webhooks } = await repo.list(clientIdOf(ctx), query.page, query.page_size);
      ctx.body = { webhooks: webhooks.map(webhookView), total, page: query.page, page_size: query.page_size };
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/webhooks/{webhook_id}',
    operationId: 'getWebhook',
    summary: 'One webhook (no secret)',
    tags: ['webhooks'],
    security: 'client',
    params: webhookIdParams,
    responses: {
      200: { description: 'The webhook', schema: webhookResponse },
      404: { description: 'No such webhook for this client' },
    },
    handler: async (ctx, { params }) => {
      ctx.body = webhookView(await own(clientIdOf(ctx), params.webhook_id));
    },
  });

  api.add({
    method: 'delete',
    path: '/api/v1/webhooks/{webhook_id}',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook and its delivery log',
    description: 'Deliveries still being retried stop at their next attempt.',
    tags: ['webhooks'],
    security: 'client',
    params: webhookIdParams,
    responses: { 204: { description: 'Deleted' }, 404: { description: 'No such webhook for this client' } },
    handler: async (ctx, { params }) => {
      const hook = await own(clientIdOf(ctx), params.webhook_id);
      if (!(await repo.delete(hook.client_id, hook.id))) throw notFound('webhook not found');
      ctx.status = 204;
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/webhooks/{webhook_id}/deliveries',
    operationId: 'listWebhookDeliveries',
    summary: 'The delivery log, newest first',
    description: "Each delivery with every attempt: the receiver's status code or the error, and how long it took.",
    tags: ['webhooks'],
    security: 'client',
    params: webhookIdParams,
    query: webhookListQuery,
    responses: {
      200: { description: 'A page of deliveries', schema: webhookDeliveriesResponse },
      404: { description: 'No such webhook for this client' },
    },
    handler: async (ctx, { params, query }) => {
      const hook = await own(clientIdOf(ctx), params.webhook_id);
      const { total, deliveries } = await repo.deliveries(hook.client_id, hook.id, query.page, query.page_size);
      ctx.body = {
        deliveries: deliveries.map((d) => ({
          delivery_id: d.id,
          event: d.event,
          event_id: Number(d.event_id),
          status: d.status,
          attempts: d.attempt_log.map((a) => ({
            attempt: a.attempt,
            status_code: a.status_code,
            error: a.error,
            duration_ms: a.duration_ms,
            at: new Date(a.created_at).toISOString(),
          })),
          created_at: new Date(d.created_at).toISOString(),
          delivered_at: iso(d.delivered_at),
        })),
        total,
        page: query.page,
        page_size: query.page_size,
      };
    },
  });
}
