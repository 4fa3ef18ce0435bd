import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { StreamLimitError, type EventListener, type EventSubscriber } from '../../db/event-listener';
import type { StoredEvent } from '../../db/repositories/events';
import type { StreamTickets } from '../../db/repositories/stream-tickets';
import { eventData } from '../../jobs/event-body';
import { AppError, badRequest } from '../../lib/errors';
import { clientIdOf } from '../context';
import type { EventService } from '../event-service';
import { AUTH_INACTIVE } from '../middleware/auth';
import type { ApiRouter } from '../routing';

const streamQuery = z.object({
  token: z
    .string()
    .optional()
    .describe(
      'a stream ticket from POST /api/v1/events/tickets (tkt_…: valid for a minute, one stream; keeps the credential out of URLs and proxy logs), or client_id:api_key:api_secret (EventSource cannot send headers)',
    ),
  job_id: z.string().uuid().optional(),
  campaign_id: z.string().min(1).max(200).optional(),
  last_event_id: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('replay events after this id (the Last-Event-ID header does the same)'),
});

/** How long a stream ticket may wait to be used: long enough to open an EventSource, too short to be worth stealing from a log. */
const TICKET_TTL_MS = 60_000;

const ticketResponse = z.object({
  ticket: z.string().describe('pass as ?token= to GET /api/v1/events/stream; opens one stream'),
  expires_at: z.string().describe('ISO 8601; unused by then, the ticket is refused (401)'),
  expires_in: z.number().int().describe('seconds from now'),
});

const statusResponse = z.object({
  status: z.enum(['healthy', 'degraded']),
  listening: z.boolean().describe('this API process is subscribed to the event channel'),
  active_subscriptions: z.number().int(),
  heartbeat_seconds: z.number(),
  timestamp: z.string(),
});

/** Spec §6: with filters, only events matching either filter (plus connected and heartbeat). */
function matches(event: StoredEvent, jobId?: string, campaignId?: string): boolean {
  if (!jobId && !campaignId) return true;
  return (
    (jobId !== undefined && event.job_id === jobId) || (campaignId !== undefined && event.campaign_id === campaignId)
  );
}

const frame = (name: string, data: unknown, id?: number) =>
  `${id !== undefined ? `id: ${id}\n` : ''}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;

// A live event is one object shared by every subscriber of its client (db/event-listener.ts): its
// frame is serialised once, not once per subscriber.
const frames = new WeakMap<StoredEvent, string>();
function eventFrame(e: StoredEvent): string {
  let text = frames.get(e);
  if (text === undefined) {
    text = frame(e.name, eventData(e), e.id);
    frames.set(e, text);
  }
  return text;
}

/**
 * The Last-Event-ID header a reconnecting EventSource sends back: an event id, or nothing (absent
 * or empty, a fresh stream). Anything else is a 400, as a malformed last_event_id is a 422.
 */
function lastEventIdHeader(header: string): number | undefined {
  if (header === '') return undefined;
  const id = /^\d{1,16}$/.test(header) ? Number(header) : Number.NaN;
  if (!Number.isSafeInteger(id))
    throw badRequest('invalid Last-Event-ID header: expected an event id (a non-negative integer)');
  return id;
}

/** What a stream may hold unsent for a client that does not read; past it the stream is closed (the client reconnects with Last-Event-ID). */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const REPLAY_BATCH = 500;

export interface EventRouteOptions {
  heartbeatSeconds: number;
  /** Streams one client may hold open on this process (SSE_MAX_STREAMS_PER_CLIENT). */
  maxStreamsPerClient: number;
  tickets: StreamTickets;
}

export function eventRoutes(
  api: ApiRouter,
  events: EventService,
  listener: EventListener,
  options: EventRouteOptions,
): void {
  const { heartbeatSeconds, maxStreamsPerClient, tickets } = options;
  api.add({
    method: 'post',
    path: '/api/v1/events/tickets',
    operationId: 'createStreamTicket',
    summary: 'A short-lived ticket that opens one event stream',
    description:
      "The stream's `token` query parameter ends up in proxy and access logs; a ticket there is worth nothing once used or a minute old, " +
      'where the client credential would stay valid. Ask for a ticket with the Bearer credential, then open ' +
      '`GET /api/v1/events/stream?token=<ticket>`. A ticket opens one stream (on any API server) within 60 seconds; a used or expired one is 401. ' +
      '`token=client_id:api_key:api_secret` keeps working as before.',
    tags: ['events'],
    security: 'client',
    responses: { 201: { description: 'The ticket', schema: ticketResponse } },
    handler: async (ctx) => {
      const { ticket, expiresAt } = await tickets.issue(clientIdOf(ctx), TICKET_TTL_MS);
      ctx.status = 201;
      ctx.body = { ticket, expires_at: expiresAt.toISOString(), expires_in: TICKET_TTL_MS / 1000 };
    },
  });
  // A client that has not taken what was written for this long is gone for our purposes.
  const stallMs = 2 * heartbeatSeconds * 1000;
  api.add({
    method: 'get',
    path: '/api/v1/events/stream',
    operationId: 'streamEvents',
    summary: "Server-Sent Events of the client's jobs and campaigns",
    description:
      'Events: connected, job.queued, job.started, job.completed, job.failed, job.cancelled, campaign.terminal, heartbeat (every 30 s). ' +
      'Each stored event has an id and events are sent in id order (an event whose transaction stays open longer than SSE_GAP_WAIT_MS, default 5 s, comes after later ones); ' +
      'reconnecting with Last-Event-ID (or last_event_id) replays what was missed. ' +
      'Filters job_id and campaign_id deliver events matching either. ' +
      'A client may hold SSE_MAX_STREAMS_PER_CLIENT streams open on one server (default 20); a stream whose client does not read what is written ' +
      '(more than 1 MiB waiting, or nothing taken for two heartbeat intervals) is closed.',
    tags: ['events'],
    security: 'token',
    query: streamQuery,
    responses: {
      200: { description: 'text/event-stream', contentType: 'text/event-stream' },
      400: { description: 'A Last-Event-ID header that is no event id' },
      429: { description: 'The client holds SSE_MAX_STREAMS_PER_CLIENT streams on this server already' },
    },
    handler: async (ctx, { query }) => {
      const clientId = clientIdOf(ctx);
      let lastId = query.last_event_id ?? lastEventIdHeader(ctx.get('last-event-id'));

      const stream = new PassThrough();

      // Whatever ends the stream (the client hanging up at any point, even during the subscription
      // or the replay, a client that does not read, or a failure) ends the subscription and the
      // heartbeat. The response's 'close' fires once, so it is listened for before anything is
      // awaited, and a socket gone before that is checked for after the wait.
      let unsubscribe: (() => void) | undefined;
      let heartbeat: NodeJS.Timeout | undefined = undefined;
      let stopped = false;
      // Live events are held back until the replay has been written, then sent in id order once.
      let replaying = true;
      const held: StoredEvent[] = [];
      // Called again once a subscription that was under way when the client left has been made.
      const stop = () => {
        stopped = true;
        clearInterval(heartbeat);
        const end = unsubscribe;
        unsubscribe = undefined;
        end?.();
        if (!stream.writableEnded) stream.end();
      };
      // Live writes are bounded by MAX_BUFFERED_BYTES; the replay waits for the client instead.
      const write = (text: string) => {
        if (stopped) return;
        stream.write(text);
        if (!replaying && stream.writableLength > MAX_BUFFERED_BYTES) stop();
      };
      /** Until the client has taken what was written; a client that takes nothing for stallMs is dropped. */
      const drained = () =>
        new Promise<void>((resolve) => {
          if (stopped || !stream.writableNeedDrain) return resolve();
          const done = () => {
            clearTimeout(timer);
            stream.off('drain', done);
            stream.off('close', done);
            resolve();
          };
          const timer = setTimeout(() => {
            stop();
            done();
          }, stallMs);
          stream.once('drain', done);
          stream.once('close', done);
        });

      // Live events come in id order (db/event-listener.ts), but one can still come late (its writer
      // outlived SSE_GAP_WAIT_MS): a late lower id is still sent, only a repeat is dropped (ids sent
      // recently are remembered; replays read above the highest id sent).
      const resumedAfter = lastId;
      const sent = new Set<number>();
      const send = (e: StoredEvent) => {
        if ((resumedAfter !== undefined && e.id <= resumedAfter) || sent.has(e.id)) return;
        sent.add(e.id);
        if (sent.size > 2000) {
          // Oldest first (insertion order).
          for (const id of sent) {
            if (sent.size <= 1000) break;
            sent.delete(id);
          }
        }
        lastId = lastId === undefined ? e.id : Math.max(lastId, e.id);
        if (matches(e, query.job_id, query.campaign_id)) write(eventFrame(e));
      };
      // Written as the client takes it (an event, then a wait whenever the buffer is full): a long
      // history is never held in memory for a client that reads slowly, or not at all.
      // It reads no further than the listener's horizon: a later event replayed before a lower one
      // that is still to commit would have that one lost to a client resuming after it.
      const replay = async () => {
        if (lastId === undefined) return;
        const upTo = await listener.horizon();
        while (!stopped) {
          const batch = await events.since(clientId, lastId, upTo, REPLAY_BATCH);
          for (const e of batch) {
            send(e);
            if (stream.writableNeedDrain) await drained();
            if (stopped) return;
          }
          if (batch.length < REPLAY_BATCH) return;
          lastId = Math.max(lastId, batch.at(-1)?.id ?? lastId);
        }
      };
      const flushHeld = () => {
        held
          .splice(0)
          .sort((a, b) => a.id - b.id)
          .forEach(send);
        replaying = false;
      };
      const subscriber: EventSubscriber = {
        clientId,
        onEvent: (e) => (replaying ? held.push(e) : send(e)),
        onResync: () => {
          replaying = true;
          replay()
            .catch(() => undefined)
            .finally(flushHeld);
        },
        // Deactivated (client:deactivate, on any API process's listener): the stream ends.
        onInactive: stop,
      };

      ctx.res.once('close', stop);
      stream.once('error', stop);
      try {
        unsubscribe = await listener.subscribe(subscriber, maxStreamsPerClient);
      } catch (err) {
        stop();
        if (err instanceof StreamLimitError) {
          throw new AppError(
            429,
            `too many open event streams: this client has ${err.limit} on this server; close one first`,
            'rate_limited',
          );
        }
        throw err;
      }
      if (stopped || ctx.req.socket.destroyed) return stop();
      // Subscribed, so a deactivation from now on is heard; one committed since the credential was
      // checked (a cached row, or a read just before it) is seen here.
      if (!(await events.isActive(clientId))) {
        stop();
        throw new AppError(403, AUTH_INACTIVE, 'forbidden');
      }

      ctx.req.socket.setTimeout(0);
      ctx.req.socket.setNoDelay(true);
      ctx.set({
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        Connection: 'keep-alive',
        'X-Accel-Buffering': 'no',
      });
      ctx.status = 200;
      ctx.body = stream;
      write('retry: 3000\n\n');
      write(
        frame('connected', {
          client_id: clientId,
          job_id: query.job_id ?? null,
          campaign_id: query.campaign_id ?? null,
          heartbeat_seconds: heartbeatSeconds,
        }),
      );
      // The stream goes out once the handler has returned (subscribed: nothing committed from now on
      // is missed); the replay writes into it then, as the client takes it.
      void replay().then(
        () => {
          flushHeld();
          let stalled = false;
          heartbeat = setInterval(() => {
            // Nothing taken since the last beat, and still nothing: the client is not reading.
            if (stalled && stream.writableNeedDrain) return stop();
            stalled = stream.writableNeedDrain;
            write(frame('heartbeat', { time: new Date().toISOString() }));
          }, heartbeatSeconds * 1000);
          if (stopped) clearInterval(heartbeat);
        },
        () => stop(),
      );
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/events/status',
    operationId: 'getEventsStatus',
    summary: "Event service health and the calling client's active subscriptions (this API process)",
    tags: ['events'],
    security: 'client',
    responses: { 200: { description: 'Event service status', schema: statusResponse } },
    handler: async (ctx) => {
      // Listening only starts with the first subscriber: no subscribers and not listening is healthy.
      const healthy = listener.listening || listener.subscriptionCount === 0;
      ctx.body = {
        status: healthy ? 'healthy' : 'degraded',
        listening: listener.listening,
        // The caller's own streams: the process-wide count would tell every tenant how busy the others are.
        active_subscriptions: listener.subscriptionsOf(clientIdOf(ctx)),
        heartbeat_seconds: heartbeatSeconds,
        timestamp: new Date().toISOString(),
      };
    },
  });
}
