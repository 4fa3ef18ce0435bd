import type { ParameterizedContext } from 'koa';
import type { ClientModel } from '../db/models/client';
import type { Logger } from '../lib/logger';

export interface AppState {
  requestId: string;
  log: Logger;
  /** The authenticated client (tenant); set by the auth middleware. */
  client?: ClientModel;
  /** Media and integration endpoints answer errors as {success:false, error, detail} (spec §7.1). */
  errorShape?: 'detail' | 'success';
  /** `?format=` names no representation; refused (422) once the route has authenticated the caller. */
  badFormat?: boolean;
}

export type AppContext = ParameterizedContext<AppState>;

/** The authenticated client's id; routes that call this are behind the auth middleware. */
export function clientIdOf(ctx: AppContext): string {
  if (!ctx.state.client) throw new Error('route reached without authentication');
  return ctx.state.client.id;
}
