import { ActivityFailure, ApplicationFailure, log, proxyActivities } from '@temporalio/workflow';
import type { DeliverWebhookInput, WebhookActivities } from '../activities/webhooks/deliver';

// Each attempt's backoff comes from the activity (nextRetryDelay from WEBHOOK_RETRY_INITIAL_SECONDS,
// doubling, at most an hour); the policy here only bounds the whole.
const delivering = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '1m', // one POST of at most 10 s plus two small transactions
  scheduleToCloseTimeout: '24h', // receivers get a day to come back, as the webhook docs promise
  retry: {
    initialInterval: '10s',
    backoffCoefficient: 2,
    maximumInterval: '1h',
    nonRetryableErrorTypes: ['WebhookDisabled'],
  },
});

const bookkeeping = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30s', // one small update
  retry: { initialInterval: '1s', maximumInterval: '1m' },
});

/**
 * Delivers one webhook event; id `webhook-delivery/<deliveryId>`, started once per delivery by the
 * workers' dispatcher (workers/webhook-dispatch.ts) from the outbox. Attempts repeat with backoff
 * for 24 h (deliverWebhook is idempotent by delivery id); after that, or once the webhook was
 * disabled, the delivery is recorded as failed.
 */
export async function deliverWebhookEvent(
  input: DeliverWebhookInput,
): Promise<{ status: 'delivered' | 'cancelled' | 'failed' }> {
  try {
    return await delivering.deliverWebhook(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const cause = err.cause instanceof ApplicationFailure ? err.cause.message : err.message;
    log.warn('webhook delivery gave up', { deliveryId: input.deliveryId, cause });
    await bookkeeping.abandonWebhookDelivery(input);
    return { status: 'failed' };
  }
}
