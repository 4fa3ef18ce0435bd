import type { ActivityDeps } from '../deps';
import { createDeliverActivities } from './send';
import { createSyncActivities, type SyncMailboxResult } from './sync';

export type { MessageRef } from './send';

export function createMailActivities(deps: ActivityDeps) {
  return { ...createDeliverActivities(deps), ...createSyncActivities(deps) };
}

export type MailActivities = ReturnType<typeof createMailActivities>;
export type { SyncMailboxResult };
