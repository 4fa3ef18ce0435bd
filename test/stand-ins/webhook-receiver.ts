import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { listenLocal } from './listen';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: { id: string; event: string; created_at: string; data: Record<string, unknown> };
  /** What the receiver answered. */
  status: number;
}

export interface WebhookReceiver {
  /** A URL on this receiver; `answers` are the statuses of its first requests, then 200. */
  url(path: string, answers?: number[]): string;
  received(path: string): ReceivedWebhook[];
  close(): Promise<void>;
}

/**
 * Verifies `X-Leadjobs-Signature` as the README tells receivers to: HMAC-SHA256 of "<t>.<raw body>"
 * with the webhook's secret, compared in constant time, and t no older than 5 minutes.
 */
export function verifySignature(
  secret: string,
  header: string | undefined,
  raw: string,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const parts = Object.fromEntries((header ?? '').split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300 || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${raw}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** A webhook receiver on 127.0.0.1 that records every request and answers as told per path. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const answers = new Map<string, number[]>();
  const log: ReceivedWebhook[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const status = answers.get(path)?.shift() ?? 200;
      const raw = Buffer.concat(chunks).toString('utf8');
      log.push({ path, headers: req.headers, raw, body: JSON.parse(raw) as ReceivedWebhook['body'], status });
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'receiver error');
    });
  });
  const { baseUrl, close } = await listenLocal(server);
  return {
    url: (path, statuses = []) => {
      answers.set(path, [...statuses]);
      return `${baseUrl}${path}`;
    },
    received: (path) => log.filter((r) => r.path === path),
    close,
  };
}
