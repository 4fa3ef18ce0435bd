import { createHmac } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { WebhookRepository, type DeliveryRow } from '../../db/repositories/webhooks';
import { CredentialCipher } from '../../lib/cipher';
import { OutboundError } from '../../lib/outbound';
import type { ActivityDeps } from '../deps';

/** Each attempt's deadline: a receiver should acknowledge and do its work later. */
export const WEBHOOK_TIMEOUT_MS = 10_000;
/** Longest pause between two attempts; the first is WEBHOOK_RETRY_INITIAL_SECONDS, each next one doubles. */
const MAX_RETRY_DELAY_MS = 60 * 60 * 1000;

export interface DeliverWebhookInput {
  deliveryId: string;
}

export interface DeliverWebhookOutput {
  status: 'delivered' | 'cancelled';
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`: the X-Leadjobs-Signature header. */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

export function createWebhookActivities(deps: ActivityDeps) {
  // Secrets are sealed with the integrations key, as mailbox passwords are (activities/mail/repo.ts).
  const repo = new WebhookRepository(deps.db, deps.config.DATABASE_SCHEMA, CredentialCipher.fromConfig(deps.config));
  if (!repo.sealsSecrets)
    deps.logger.warn(
      'INTEGRATIONS_ENCRYPTION_KEY is not set: only webhooks whose secret is stored in plaintext can be delivered; sealed ones retry until it is set',
    );
  const initialMs = deps.config.WEBHOOK_RETRY_INITIAL_SECONDS * 1000;

  return {
    /**
     * One attempt at one delivery: POSTs `{id, event, created_at, data}` signed with the webhook's
     * secret (sealed at rest, opened here) through the SSRF guard, and logs the attempt. Idempotent
     * by delivery id: a delivered, failed or cancelled delivery is not sent again, and every attempt
     * carries the same `id`.
     * A non-2xx answer or a network error throws a retryable failure whose delay doubles from
     * WEBHOOK_RETRY_INITIAL_SECONDS (this worker's config decides, not the workflow's history);
     * the workflow's retry policy bounds the whole at 24 h. A deleted or disabled webhook, or a
     * deactivated client, ends it (cancelled).
     */
    async deliverWebhook(input: DeliverWebhookInput): Promise<DeliverWebhookOutput> {
      const found = await repo.delivery(input.deliveryId);
      if (!found) return { status: 'cancelled' };
      const { delivery, webhook } = found;
      if (delivery.status === 'delivered') return { status: 'delivered' };
      if (delivery.status !== 'pending') return { status: 'cancelled' };
      // A deactivated client's events are not sent (issue 38 item 12), nor later on re-activation.
      if (!webhook?.active || !found.clientActive) {
        await repo.setStatus(delivery.id, 'cancelled');
        return { status: 'cancelled' };
      }
      let secret: string;
      try {
        secret = repo.signingSecret(webhook);
      } catch (err) {
        // This worker's configuration, not the receiver's fault: no attempt is logged, and the
        // delivery retries (within its 24 h) until a worker with the key sends it.
        throw ApplicationFailure.create({
          message: `cannot sign the delivery: ${(err as Error).message}`,
          type: 'WebhookSecretUnavailable',
        });
      }
      const attempt = Context.current().info.attempt;
      const body = JSON.stringify(wireBody(delivery));
      const started = Date.now();
      let statusCode: number | null = null;
      let error: string | null = null;
      try {
        const res = await deps.http.fetch(webhook.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-leadjobs-event': delivery.event,
            'x-leadjobs-delivery': delivery.id,
            'x-leadjobs-signature': signWebhook(secret, body, Math.floor(Date.now() / 1000)),
          },
          body,
          // A receiver's redirect is not followed: the signed request goes where it was registered.
          redirect: 'manual',
          // The receiver's answer is only logged by its status: read little of it.
          maxBytes: 64 * 1024,
          signal: AbortSignal.any([Context.current().cancellationSignal, AbortSignal.timeout(WEBHOOK_TIMEOUT_MS)]),
        });
        statusCode = res.status;
      } catch (err) {
        if (Context.current().cancellationSignal.aborted) throw err;
        error =
          err instanceof OutboundError
            ? `${err.kind}: ${err.message}`
            : err instanceof Error && err.name === 'TimeoutError'
              ? `timeout: no answer within ${WEBHOOK_TIMEOUT_MS / 1000} s`
              : String((err as Error).message ?? err);
      }
      const durationMs = Date.now() - started;
      const logged = { attempt, status_code: statusCode, error: error?.slice(0, 500) ?? null, duration_ms: durationMs };
      if (statusCode !== null && statusCode >= 200 && statusCode < 300) {
        await repo.recordSuccess(delivery, logged);
        return { status: 'delivered' };
      }
      const { active } = await repo.recordFailure(delivery, logged, deps.config.WEBHOOK_DISABLE_AFTER_FAILURES);
      const why = error ?? `receiver answered HTTP ${statusCode}`;
      if (!active) {
        await repo.setStatus(delivery.id, 'failed');
        throw ApplicationFailure.nonRetryable(
          `webhook disabled after repeated failures; last: ${why}`,
          'WebhookDisabled',
        );
      }
      throw ApplicationFailure.create({
        message: why,
        type: 'WebhookAttemptFailed',
        nextRetryDelay: Math.min(MAX_RETRY_DELAY_MS, initialMs * 2 ** (attempt - 1)),
      });
    },

    /** After 24 h of failed attempts: the delivery is recorded as failed (idempotent). */
    async abandonWebhookDelivery(input: DeliverWebhookInput): Promise<void> {
      await repo.setStatus(input.deliveryId, 'failed');
    },
  };
}

function wireBody(delivery: DeliveryRow): Record<string, unknown> {
  const { event, created_at, data } = delivery.body;
  return { id: delivery.id, event, created_at, data };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
