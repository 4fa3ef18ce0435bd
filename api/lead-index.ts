import type { Logger } from '../lib/logger';
import type { Temporal } from '../lib/temporal';
import { leadsTaskQueue } from '../jobs/queues';
import { indexLeads, moreLeadsSignal } from '../workflows/leads';

/**
 * Asks the worker to drain a client's lead-index outbox: signalWithStart on the client's
 * `leads-index/<clientId>` workflow (one per client). The outbox rows are already committed, so if
 * Temporal cannot be reached the next job or request of the client indexes them.
 */
export class LeadIndexTrigger {
  constructor(
    private readonly temporal: Temporal,
    private readonly taskQueuePrefix: string,
    private readonly logger: Logger,
  ) {}

  async kick(clientId: string): Promise<void> {
    try {
      await this.temporal.client.workflow.signalWithStart(indexLeads, {
        workflowId: `leads-index/${clientId}`,
        taskQueue: leadsTaskQueue(this.taskQueuePrefix),
        args: [{ clientId }],
        signal: moreLeadsSignal,
        signalArgs: [],
        staticSummary: `lead indexing for ${clientId}`,
      });
    } catch (err) {
      this.logger.warn({ err, clientId }, 'could not start lead indexing; queued leads wait for the next trigger');
    }
  }
}
