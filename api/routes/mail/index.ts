import type { ApiRouter } from '../../routing';
import { mailboxesRoutes } from './mailboxes';
import { messagesRoutes } from './messages';
import { searchRoutes } from './search';
import { mailLookups, type MailRouteDeps } from './shared';
import { snoozeRoutes } from './snooze';
import { templatesRoutes } from './templates';
import { threadsRoutes } from './threads';

export { MAIL_IMPORT_PATH, type MailRouteDeps } from './shared';

/** The mail API (spec §2.13/§4.10), one file per sub-resource; registered in this order, as the OpenAPI document lists them. */
export function mailRoutes(api: ApiRouter, deps: MailRouteDeps): void {
  const lookups = mailLookups(deps);
  for (const routes of [mailboxesRoutes, messagesRoutes, snoozeRoutes, threadsRoutes, searchRoutes, templatesRoutes])
    routes(api, deps, lookups);
}
