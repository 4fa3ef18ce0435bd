import type { TestApi } from './api';

export interface Caller {
  auth: string;
  get(path: string): Promise<Response>;
  post(path: string, body: unknown, type?: string): Promise<Response>;
  del(path: string): Promise<Response>;
  json<T = Record<string, unknown>>(res: Response): Promise<T>;
}

export function caller(api: TestApi, auth: string): Caller {
  return {
    auth,
    get: (path) => fetch(`${api.url}${path}`, { headers: { authorization: auth } }),
    post: (path, body, type = 'application/json') =>
      fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': type },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
    del: (path) => fetch(`${api.url}${path}`, { method: 'DELETE', headers: { authorization: auth } }),
    json: async <T>(res: Response) => (await res.json()) as T,
  };
}

/** Polls the status endpoint until the job reaches one of `statuses`. */
export async function waitForStatus(
  c: Caller,
  jobId: string,
  statuses: string[],
  timeoutMs = 30000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = await c.json(await c.get(`/api/v1/jobs/${jobId}/status`));
    if (statuses.includes(String(last.status))) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `job ${jobId} did not reach ${statuses.join('|')} within ${timeoutMs} ms (last: ${JSON.stringify(last)})`,
  );
}
