import { Runtime } from '@temporalio/worker';
import type { ProviderCallOutcome } from '../lib/outbound';

/**
 * The service's own worker metrics, recorded through the Temporal runtime's meter so that one
 * Prometheus endpoint (WORKER_METRICS_ADDRESS) serves them next to the SDK's (task slots, poll and
 * activity latencies, failures by activity type). Without that setting the meter records nothing.
 */
export function providerCallCounter(): (provider: string, outcome: ProviderCallOutcome) => void {
  const counter = Runtime.instance().metricMeter.createCounter(
    'leadjobs_provider_requests',
    'requests',
    'Requests to outside providers by provider and outcome',
  );
  return (provider, outcome) => counter.withTags({ provider, outcome }).add(1);
}
