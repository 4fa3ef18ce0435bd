import { clientIdOf } from '../../context';
import { messageSummary } from '../../presenters/mail';
import type { ApiRouter } from '../../routing';
import { searchQuery, searchResponse } from '../../schemas/mail';
import { type MailLookups, type MailRouteDeps, MAIL_ROUTE } from './shared';

/** Full-text search in a mailbox (Postgres websearch_to_tsquery). */
export function searchRoutes(api: ApiRouter, _deps: MailRouteDeps, l: MailLookups): void {
  const { repoOf, mailboxByAddress } = l;
  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/search',
    operationId: 'searchMail',
    summary: 'Full-text search in a mailbox, most relevant first',
    description:
      'Postgres full text (english stemming; subject weighs more than body), `q` in web-search syntax: words, "a phrase", or, -word. Ranked by ts_rank.',
    query: searchQuery,
    responses: {
      200: { description: 'Matches', schema: searchResponse },
      404: { description: 'No mailbox with this address' },
    },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      const box = await mailboxByAddress(clientId, query.email);
      const { total, messages } = await repoOf().search(clientId, box.id, query.q, query.limit);
      ctx.body = { success: true, email: box.address, query: query.q, total, messages: messages.map(messageSummary) };
    },
  });
}
