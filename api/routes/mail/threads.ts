import { notFound } from '../../../lib/errors';
import { normalizeMessageId } from '../../../lib/mail/message-id';
import { clientIdOf } from '../../context';
import { messageView } from '../../presenters/mail';
import type { ApiRouter } from '../../routing';
import { threadParams, threadResponse } from '../../schemas/mail';
import { type MailLookups, type MailRouteDeps, MAIL_ROUTE } from './shared';

/** Threads: every message of a thread, oldest first. */
export function threadsRoutes(api: ApiRouter, _deps: MailRouteDeps, l: MailLookups): void {
  const { repoOf } = l;
  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/threads/{thread_id}',
    operationId: 'getThread',
    summary: 'A thread in chronological order',
    description: 'thread_id is the first Message-ID of the thread, URL-encoded; the angle brackets may be left out.',
    params: threadParams,
    responses: {
      200: { description: 'The thread', schema: threadResponse },
      404: { description: 'No such thread for this client' },
    },
    handler: async (ctx, { params }) => {
      const threadId = normalizeMessageId(params.thread_id);
      const rows = await repoOf().thread(clientIdOf(ctx), threadId);
      if (rows.length === 0) throw notFound('thread not found');
      ctx.body = { success: true, thread_id: threadId, message_count: rows.length, messages: rows.map(messageView) };
    },
  });
}
