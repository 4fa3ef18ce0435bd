import { ApplicationFailure } from '@temporalio/activity';
import type { z } from 'zod';
import type { Db } from '../db';
import type { Config } from '../lib/config';
import type { Logger } from '../lib/logger';
import type { OutboundClient } from '../lib/outbound';
import type { Storage } from '../lib/storage';
import type { SearchClient } from '../search/client';

/** What activities get from the worker's composition root (workers/main.ts). */
export interface ActivityDeps {
  config: Config;
  db: Db;
  storage: Storage;
  search: SearchClient;
  logger: Logger;
  /** The SSRF-guarded HTTP client of URLs clients supply (USER_URL_ALLOW_HOSTS; one per process). */
  http: OutboundClient;
  /**
   * The guarded client of the operator's endpoints (providers, LLM base URLs): OUTBOUND_ALLOW_HOSTS
   * as well. Absent (tests that build activities by hand): `http`, the stricter one. Use endpointHttp().
   */
  endpointHttp?: OutboundClient;
  /** The endpoint client through PROXY_URL, when that is set: the profile requests of crawlPublicSocial use it. */
  proxiedHttp?: OutboundClient;
  /** This worker's identity, recorded as the job's worker_id. */
  workerId: string;
  /** What the worker closes once it has drained; absent where activities are built by hand (tests), which then close nothing. */
  held?: HeldResources;
}

/** The client for an operator-configured endpoint (a provider's base URL, an LLM base URL). */
export function endpointHttp(deps: Pick<ActivityDeps, 'http' | 'endpointHttp'>): OutboundClient {
  return deps.endpointHttp ?? deps.http;
}

/**
 * What activities keep between attempts (crawlLanding's Chromium), closed by the worker once its
 * workers have drained: a stopped worker leaves no browser behind, whatever its idle timer says.
 */
export class HeldResources {
  private readonly closers: (() => Promise<void>)[] = [];

  hold(close: () => Promise<void>): void {
    this.closers.push(close);
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.closers.splice(0).map((close) => close()));
  }
}

/** Input of every job-type activity (its name is the job type). */
export interface JobActivityInput {
  jobId: string;
  clientId: string;
  payload: Record<string, unknown>;
}

/** Job-type activities store their result themselves and return only its size. */
export interface JobActivityOutput {
  resultsCount: number;
}

/**
 * A job payload parsed with its catalog schema (jobs/<type>.ts): defaults applied, typed. The API
 * validated it with the same schema; a payload that no longer parses (stored before a schema change)
 * is a permanent failure.
 */
export function parsePayload<S extends z.ZodType>(schema: S, payload: unknown): z.infer<S> {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) {
    const why = parsed.error.issues.map((i) => `${i.path.join('.') || 'payload'}: ${i.message}`).join('; ');
    throw ApplicationFailure.nonRetryable(`invalid payload: ${why}`, 'InvalidInput');
  }
  return parsed.data;
}
