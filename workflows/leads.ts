import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineSignal,
  getExternalWorkflowHandle,
  ParentClosePolicy,
  proxyActivities,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { LeadActivities } from '../activities/store/leads';

// Indexing waits out an Elasticsearch outage: the outbox keeps every update, and the retries
// (every 30 s at most) catch the index up soon after Elasticsearch is back.
const leadIndexing = proxyActivities<LeadActivities>({
  startToCloseTimeout: '5m', // one call writes at most 25 bulk requests of 200 leads
  heartbeatTimeout: '1m', // a heartbeat per bulk request; one bulk request of 200 leads takes well under a minute
  scheduleToCloseTimeout: '24h', // a day-long outage is an incident; the outbox still holds everything
  retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '30s' },
});

/** Activity calls per run before it continues as new: a few hundred history events at most. */
const MAX_BATCHES_PER_RUN = 50;

/** "More leads are queued": sent with signalWithStart by the API after imports and ICP changes. */
export const moreLeadsSignal = defineSignal('moreLeads');

export interface IndexLeadsInput {
  clientId: string;
  /** Activity calls per run before continuing as new (default 50; tests set it small). */
  maxBatchesPerRun?: number;
  /** Leads indexed by the earlier runs of this chain, carried over a continue-as-new. */
  indexedBefore?: number;
}

/**
 * Drains one client's lead-index outbox; id `leads-index/<clientId>`. Started or signalled with
 * signalWithStart, so there is at most one per client and a signal during a run means one more
 * pass. It lingers a second before finishing so that a signal sent just then is not missed.
 * A busy client's workflow never finishes: after `maxBatchesPerRun` activity calls (or when
 * Temporal suggests it) it continues as new, so its history stays bounded.
 */
export async function indexLeads(input: IndexLeadsInput): Promise<{ indexed: number }> {
  const maxBatches = Math.max(1, input.maxBatchesPerRun ?? MAX_BATCHES_PER_RUN);
  // A run always starts with a pass: it was started or signalled for one, or the run before it
  // continued as new with a pass still owed.
  let more = true;
  setHandler(moreLeadsSignal, () => {
    more = true;
  });
  let indexed = input.indexedBefore ?? 0;
  let batches = 0;
  while (more) {
    if (batches >= maxBatches || workflowInfo().continueAsNewSuggested) {
      // Only with a pass owed (`more`), which the next run makes first: every signal received so
      // far is served there. One that arrives while this run closes makes Temporal reject the
      // closing task and replay it with the signal; one after that goes to the new run.
      await condition(allHandlersFinished);
      return await continueAsNew<typeof indexLeads>({ ...input, indexedBefore: indexed });
    }
    more = false;
    const pass = await leadIndexing.indexLeads({ clientId: input.clientId });
    batches++;
    indexed += pass.indexed;
    if (pass.more) more = true;
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
      await startChild(indexLeads, {
        workflowId,
        args: [{ clientId }],
        parentClosePolicy: ParentClosePolicy.ABANDON,
        staticSummary: `lead indexing for ${clientId}`,
      });
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
