import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp, type AppDeps } from '../../api/app';
import { createDb } from '../../db';
import { ClientRepository } from '../../db/repositories/clients';
import { parseConfig, type Config } from '../../lib/config';
import type { IssuedCredentials } from '../../lib/credentials';
import type { JobType } from '../../jobs';
import { createLogger } from '../../lib/logger';
import { Storage } from '../../lib/storage';
import { connectTemporalLazy } from '../../lib/temporal';
import { createSearchClient } from '../../search/client';

export function testConfig(overrides: Record<string, string> = {}): Config {
  return parseConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent', ...overrides });
}

export interface TestApi {
  url: string;
  deps: AppDeps;
  /** Creates a client through the same repository the operator CLI uses. */
  newClient(name?: string): Promise<IssuedCredentials>;
  close(): Promise<void>;
}

/** The real API on a free port, wired to the real stack (per-run schema, prefixes). */
export async function startTestApi(
  overrides: Record<string, string> = {},
  availableJobTypes?: readonly JobType[],
): Promise<TestApi> {
  const config = testConfig(overrides);
  const deps: AppDeps = {
    config,
    db: createDb(config),
    temporal: connectTemporalLazy(config),
    search: createSearchClient(config),
    storage: Storage.fromConfig(config),
    logger: createLogger(config.LOG_LEVEL),
    availableJobTypes,
  };
  const { app, close: closeApp } = createApp(deps);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deps,
    newClient: (name = 'test client') => new ClientRepository(deps.db).create(name),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await closeApp();
      await Promise.allSettled([deps.db.destroy(), deps.temporal.connection.close(), deps.search.close()]);
    },
  };
}

export const bearer = (c: IssuedCredentials) => `Bearer ${c.client_id}:${c.api_key}:${c.api_secret}`;

/** Task queues of this test file's own, so parallel files' workers never take each other's jobs. */
export function ownQueues(name: string): Record<string, string> {
  return { TASK_QUEUE_PREFIX: `${process.env.TASK_QUEUE_PREFIX ?? 'test'}-${name}` };
}
