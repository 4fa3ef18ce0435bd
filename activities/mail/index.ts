import type { ActivityDeps } from '../deps';
import { createDeliverActivities } from './send';
import { createSyncActivities, type SyncMailboxResult } from './sync';

/** A stored message a workflow works on: the client it belongs to and its row id. */
export interface MessageRef {
  clientId: string;
  messageId: number;
}

export function createMailActivities(deps: ActivityDeps) {
  return { ...createDeliverActivities(deps), ...createSyncActivities(deps) };
}

export type MailActivities = ReturnType<typeof createMailActivities>;
export type { SyncMailboxResult };
