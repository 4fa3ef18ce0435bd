import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Many small company websites behind one 127.0.0.1 port, for the job engine's tests with the real
 * crawlSite: each start URL's query says how its site behaves, so every test makes a site of its own
 * (a unique `site=` keeps the submission de-duplication out of the way).
 *
 * - `leads=N`: the page lists N e-mail addresses `leadI@<site>.example` (default 1);
 * - `delay_ms=M`: the page answers after M ms (a slow site: the crawl heartbeats meanwhile);
 * - `status=S`: the page answers HTTP S (a failing site);
 * - `emails=a@x,b@y`: the page lists these addresses instead (addresses a mail stand-in knows).
 *
 * robots.txt and sitemap.xml are 404 (nothing disallowed, no sitemap); pages have no links, so each
 * crawl fetches its one start page, whose og:site_name is the site's name (the lead's name). Every
 * page request is recorded with its start and, if the client hung up before the answer (a cancelled
 * crawl), the time it did.
 *
 * Leads are businesses keyed by their domain, so sites that must be distinct leads get a loopback
 * address of their own (`ownHost`: 127.0.0.2, 127.0.0.3, ...; Linux routes all of 127.0.0.0/8 to lo).
 */
export interface LeadSites {
  baseUrl: string;
  /** A start URL for a new site on 127.0.0.1: `url({ leads: 3 })`. */
  url(query?: Record<string, string | number>): string;
  /** A start URL for a new site on a loopback address of its own (a distinct lead). */
  ownHost(query?: Record<string, string | number>): Promise<string>;
  /** Page requests of the site named in `url`'s query, oldest first. */
  requests(siteUrl: string): PageRequest[];
  close(): Promise<void>;
}

export interface PageRequest {
  site: string;
  startedAt: number;
  /** When the client closed the connection before the answer was sent. */
  abortedAt?: number;
  answeredAt?: number;
}

export async function startLeadSites(): Promise<LeadSites> {
  const seen: PageRequest[] = [];
  let counter = 0;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (url.pathname !== '/') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    const site = url.searchParams.get('site') ?? 'default';
    const leads = Number(url.searchParams.get('leads') ?? 1);
    const delayMs = Number(url.searchParams.get('delay_ms') ?? 0);
    const status = Number(url.searchParams.get('status') ?? 200);
    const record: PageRequest = { site, startedAt: Date.now() };
    seen.push(record);
    const timer = setTimeout(() => {
      record.answeredAt = Date.now();
      const listed =
        url.searchParams.get('emails')?.split(',') ??
        Array.from({ length: leads }, (_, i) => `lead${i}@${site}.example`);
      const emails = listed.map((e) => `<li><a href="mailto:${e}">${e}</a></li>`).join('');
      res
        .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          `<!doctype html><html><head><title>${site}</title><meta property="og:site_name" content="${site}"></head><body><h1>${site}</h1><ul>${emails}</ul></body></html>`,
        );
    }, delayMs);
    res.on('close', () => {
      if (!record.answeredAt) {
        record.abortedAt = Date.now();
        clearTimeout(timer);
      }
    });
  };
  const servers: Server[] = [];
  const listen = async (host: string): Promise<string> => {
    const server = createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  };
  const baseUrl = await listen('127.0.0.1');
  let nextHost = 2;
  const startUrl = (base: string, query: Record<string, string | number>) => {
    const params = new URLSearchParams({
      site: `s${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 6)}`,
    });
    for (const [k, v] of Object.entries(query)) params.set(k, String(v));
    return `${base}/?${params.toString()}`;
  };
  return {
    baseUrl,
    url: (query = {}) => startUrl(baseUrl, query),
    ownHost: async (query = {}) => startUrl(await listen(`127.0.0.${nextHost++}`), query),
    requests: (siteUrl) => {
      const site = new URL(siteUrl).searchParams.get('site');
      return seen.filter((r) => r.site === site);
    },
    close: async () => {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
