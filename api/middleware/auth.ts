import type { Middleware } from 'koa';
import type { Db } from '../../db';
import type { ClientModel } from '../../db/models/client';
import { ClientRepository } from '../../db/repositories/clients';
import { AppError } from '../../lib/errors';
import { secretMatches } from '../../lib/credentials';
import type { AppState } from '../context';

// The four details of spec §5.3, word for word.
export const AUTH_MISSING = 'missing authentication credentials';
export const AUTH_FORMAT = 'invalid authentication format, expected client_id:api_key:api_secret';
export const AUTH_INVALID = 'invalid client credentials';
export const AUTH_INACTIVE = 'client account is inactive';

const unauthorized = (detail: string) => new AppError(401, detail, 'unauthorized', { 'WWW-Authenticate': 'Bearer' });

/** Resolves `client_id:api_key:api_secret` to an active client, or throws the spec's 401/403. */
export async function authenticateCredential(db: Db, credential: string | undefined): Promise<ClientModel> {
  if (credential === undefined || credential.trim() === '') throw unauthorized(AUTH_MISSING);
  const parts = credential.split(':');
  if (parts.length !== 3 || parts.some((p) => p === '' || /\s/.test(p))) throw unauthorized(AUTH_FORMAT);
  const [clientId, apiKey, apiSecret] = parts as [string, string, string];
  const client = await new ClientRepository(db).findById(clientId);
  // Both comparisons run whatever the first one says, so timing does not tell which part was wrong.
  const keyOk = secretMatches(apiKey, client?.api_key_hash ?? '');
  const secretOk = secretMatches(apiSecret, client?.api_secret_hash ?? '');
  if (!client || !keyOk || !secretOk) throw unauthorized(AUTH_INVALID);
  if (!client.is_active) throw new AppError(403, AUTH_INACTIVE, 'forbidden');
  return client;
}

/** `Authorization: Bearer <client_id>:<api_key>:<api_secret>` (spec §5.1). */
export function bearerAuth(db: Db): Middleware<AppState> {
  return async (ctx, next) => {
    const header = ctx.get('authorization');
    if (header === '') throw unauthorized(AUTH_MISSING);
    const match = /^Bearer\s+(\S.*)$/i.exec(header);
    if (!match) throw unauthorized(AUTH_FORMAT);
    ctx.state.client = await authenticateCredential(db, match[1]);
    return next();
  };
}

/** The event stream's credential: `?token=client_id:api_key:api_secret` (spec §5.4), or the Bearer header. */
export function tokenAuth(db: Db): Middleware<AppState> {
  const bearer = bearerAuth(db);
  return async (ctx, next) => {
    const token = ctx.query.token;
    if (typeof token === 'string' && token !== '') {
      ctx.state.client = await authenticateCredential(db, token);
      return next();
    }
    if (ctx.get('authorization') !== '') return bearer(ctx, next);
    throw unauthorized(AUTH_MISSING);
  };
}
