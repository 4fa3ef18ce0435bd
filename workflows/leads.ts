import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { condition, defineSignal, getExternalWorkflowHandle, ParentClosePolicy, proxyActivities, setHandler, startChild } from '@temporalio/workflow';
import type { LeadActivities } from '../activities/store/leads';

// Indexing waits out an Elasticsearch outage: the outbox keeps every update, and the retries
// (every 30 s at most) catch the index up soon after Elasticsearch is back.
const leadIndexing = proxyActivities<LeadActivities>({
  startToCloseTimeout: '5m', // drains the outbox in bulk requests of 200 leads
  scheduleToCloseTimeout: '24h', // a day-long outage is an incident; the outbox still holds everything
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** "More leads are queued": sent with signalWithStart by the API after imports and ICP changes. */
export const moreLeadsSignal = defineSignal('moreLeads');

export interface IndexLeadsInput {
  clientId: string;
}

/**
 * Drains one client's lead-index outbox; id `leads-index/<clientId>`. Started or signalled with
 * signalWithStart, so there is at most one per client and a signal during a run means one more
 * pass. It lingers a second before finishing so that a signal sent just then is not missed.
 */
export async function indexLeads(input: IndexLeadsInput): Promise<{ indexed: number }> {
  let more = true;
  setHandler(moreLeadsSignal, () => {
    more = true;
  });
  let indexed = 0;
  while (more) {
    more = false;
    indexed += (await leadIndexing.indexLeads({ clientId: input.clientId })).indexed;
    if (!more) await condition(() => more, '1s');
  }
  return { indexed };
}

/**
 * From another workflow (runJob): one more pass of the client's indexLeads, started as an abandoned
 * child on the caller's task queue when none runs, signalled when one does. So an Elasticsearch
 * outage keeps one retrying workflow per client, not one per completed job.
 */
export async function requestLeadIndexing(clientId: string): Promise<void> {
  const workflowId = `leads-index/${clientId}`;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      await startChild(indexLeads, { workflowId, args: [{ clientId }], parentClosePolicy: ParentClosePolicy.ABANDON, staticSummary: `lead indexing for ${clientId}` });
      return;
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    try {
      await getExternalWorkflowHandle(workflowId).signal(moreLeadsSignal);
      return;
    } catch {
      // It finished between the two calls: start a new one.
    }
  }
}
