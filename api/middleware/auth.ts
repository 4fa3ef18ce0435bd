import type { Middleware } from 'koa';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import type { Db } from '../../db';
import type { ClientModel } from '../../db/models/client';
import { TICKET_PREFIX } from '../../db/repositories/stream-tickets';
import { AppError } from '../../lib/errors';
import { secretMatches } from '../../lib/credentials';
import type { AppContext, AppState } from '../context';

// The four details of spec §5.3, word for word.
export const AUTH_MISSING = 'missing authentication credentials';
export const AUTH_FORMAT = 'invalid authentication format, expected client_id:api_key:api_secret';
export const AUTH_INVALID = 'invalid client credentials';
export const AUTH_INACTIVE = 'client account is inactive';

const unauthorized = (detail: string) => new AppError(401, detail, 'unauthorized', { 'WWW-Authenticate': 'Bearer' });

/** Looks a client row up by id: db/client-cache.ts's ClientCache, or the repository straight. */
export interface ClientFinder {
  find(id: string): Promise<ClientModel | undefined>;
}

/**
 * Resolves `client_id:api_key:api_secret` to an active client, or throws the spec's 401/403. The
 * row may come from the cache; the key and secret are compared with its hashes on every call.
 */
export async function authenticateCredential(
  clients: ClientFinder,
  credential: string | undefined,
): Promise<ClientModel> {
  if (credential === undefined || credential.trim() === '') throw unauthorized(AUTH_MISSING);
  const parts = credential.split(':');
  if (parts.length !== 3 || parts.some((p) => p === '' || /\s/.test(p))) throw unauthorized(AUTH_FORMAT);
  const [clientId, apiKey, apiSecret] = parts as [string, string, string];
  const client = await clients.find(clientId);
  // Every comparison runs whatever the others say, so timing does not tell which part was wrong
  // (nor whether the pair is the current or the rotated one).
  const keyOk = secretMatches(apiKey, client?.api_key_hash ?? '');
  const secretOk = secretMatches(apiSecret, client?.api_secret_hash ?? '');
  // The pair a rotation replaced, within its grace period (client:rotate).
  const previousKeyOk = secretMatches(apiKey, client?.previous_key_hash ?? '');
  const previousSecretOk = secretMatches(apiSecret, client?.previous_secret_hash ?? '');
  const inGrace = client?.previous_valid_until ? new Date(client.previous_valid_until).getTime() > Date.now() : false;
  const current = keyOk && secretOk;
  const previous = previousKeyOk && previousSecretOk && inGrace;
  if (!client || !(current || previous)) throw unauthorized(AUTH_INVALID);
  if (!client.is_active) throw new AppError(403, AUTH_INACTIVE, 'forbidden');
  return client;
}

/**
 * Failed authentications per source address, counted in Postgres so that every API process shares
 * them (like the per-client limit, which only starts once a request is authenticated). The source
 * is `ctx.ip`: the socket's address (X-Forwarded-For's with TRUST_PROXY). Past `perMinute` failures in a minute,
 * the address's failing requests get 429 for `blockSeconds`. Requests with valid credentials never
 * consult it, so a good client behind the same address is never slowed or refused.
 */
export class AuthFailureLimit {
  private readonly limiter: RateLimiterPostgres;

  constructor(
    db: Db,
    private readonly options: { perMinute: number; blockSeconds: number; schema: string },
  ) {
    this.limiter = new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: 'rate_limits',
      schemaName: options.schema,
      tableCreated: true,
      keyPrefix: 'auth_failures',
      points: options.perMinute,
      duration: 60,
      blockDuration: options.blockSeconds,
      // Once blocked, this process refuses the address's failures from memory, without a write each.
      inMemoryBlockOnConsumed: options.perMinute + 1,
      inMemoryBlockDuration: options.blockSeconds,
    });
  }

  /** Counts a failed authentication from `ip`; returns what to answer: `failure` itself, or 429 past the limit. */
  async failed(ip: string, failure: AppError): Promise<AppError> {
    try {
      await this.limiter.consume(ip);
      return failure;
    } catch (rejected) {
      if (rejected instanceof Error) throw rejected;
      const waitMs = (rejected as RateLimiterRes).msBeforeNext;
      return new AppError(
        429,
        `too many failed authentication attempts from this address, maximum ${this.options.perMinute} per minute`,
        'rate_limited',
        {
          'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))),
        },
      );
    }
  }
}

/** The client a Bearer header names, or the spec's 401/403. */
async function bearerClient(clients: ClientFinder, header: string): Promise<ClientModel> {
  if (header === '') throw unauthorized(AUTH_MISSING);
  const match = /^Bearer\s+(\S.*)$/i.exec(header);
  if (!match) throw unauthorized(AUTH_FORMAT);
  return authenticateCredential(clients, match[1]);
}

/** Runs `authenticate`; a 401 it throws is counted against the caller's address first. */
async function counted(
  ctx: AppContext,
  failures: AuthFailureLimit | undefined,
  authenticate: () => Promise<ClientModel>,
): Promise<ClientModel> {
  try {
    return await authenticate();
  } catch (err) {
    if (failures && err instanceof AppError && err.status === 401) throw await failures.failed(ctx.ip, err);
    throw err;
  }
}

/** `Authorization: Bearer <client_id>:<api_key>:<api_secret>` (spec §5.1). */
export function bearerAuth(clients: ClientFinder, failures?: AuthFailureLimit): Middleware<AppState> {
  return async (ctx, next) => {
    ctx.state.client = await counted(ctx, failures, () => bearerClient(clients, ctx.get('authorization')));
    return next();
  };
}

export const TICKET_INVALID = 'invalid or expired stream ticket: ask POST /api/v1/events/tickets for a new one';

/** Redeems one-use stream tickets (db/repositories/stream-tickets.ts). */
export interface TicketRedeemer {
  redeem(ticket: string): Promise<string | undefined>;
}

/** The client a stream ticket names (the ticket is used up), or 401; a client deactivated since is 403. */
async function ticketClient(clients: ClientFinder, tickets: TicketRedeemer, ticket: string): Promise<ClientModel> {
  const clientId = await tickets.redeem(ticket);
  const client = clientId === undefined ? undefined : await clients.find(clientId);
  if (!client) throw unauthorized(TICKET_INVALID);
  if (!client.is_active) throw new AppError(403, AUTH_INACTIVE, 'forbidden');
  return client;
}

/**
 * The event stream's credential: `?token=` with a short-lived stream ticket (`tkt_…`, one stream,
 * so a proxy log that keeps the URL keeps nothing of use), or `client_id:api_key:api_secret` as
 * spec §5.4 has it; or the Bearer header.
 */
export function tokenAuth(
  clients: ClientFinder,
  failures?: AuthFailureLimit,
  tickets?: TicketRedeemer,
): Middleware<AppState> {
  return async (ctx, next) => {
    const token = ctx.query.token;
    ctx.state.client = await counted(ctx, failures, () => {
      if (typeof token !== 'string' || token === '') return bearerClient(clients, ctx.get('authorization'));
      if (tickets && token.startsWith(TICKET_PREFIX)) return ticketClient(clients, tickets, token);
      return authenticateCredential(clients, token);
    });
    return next();
  };
}
