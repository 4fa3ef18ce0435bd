import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import type { AppState } from '../../api/context';
import { ApiRouter } from '../../api/routing';
import { workflowResultRoutes } from '../../api/routes/workflow-results';
import type { WorkflowResultsService } from '../../api/workflow-results';

// GET .../workflow-results?wait=true over real HTTP, the service a fake whose job lookup takes
// 300 ms: a client that hangs up during that lookup must end the wait that follows it (the real
// service polls Postgres every 500 ms until the pipeline's deadline, up to some 20 minutes).
let server: Server;
let port: number;
const seen: AbortSignal[] = [];
beforeAll(async () => {
  const service = {
    jobOf: async () => {
      await new Promise((r) => setTimeout(r, 300));
      return { id: 'job' };
    },
    results: async (_job: unknown, options: { wait: boolean; signal: AbortSignal }) => {
      seen.push(options.signal);
      return {};
    },
  } as unknown as WorkflowResultsService;
  const api = new ApiRouter({
    client: [
      async (ctx, next) => {
        ctx.state.client = { id: 'cli_x' } as AppState['client'];
        await next();
      },
    ],
    token: [],
    none: [],
  });
  workflowResultRoutes(api, service);
  const app = new Koa<AppState>();
  app.silent = true;
  app.use(api.router.routes());
  server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => server.close(r)));

test('a client that hangs up while the job is looked up ends the wait', async () => {
  await new Promise<void>((resolve) => {
    const req = request({
      port,
      host: '127.0.0.1',
      path: '/api/v1/jobs/6a1b8c1e-3f0e-4a55-9d3e-2b7f3f1c9a10/workflow-results?wait=true',
    });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.end();
    setTimeout(() => req.destroy(), 100);
  });
  for (let i = 0; i < 50 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  expect(seen).toHaveLength(1);
  expect(seen[0]?.aborted).toBe(true);
});
