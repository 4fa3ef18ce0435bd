import { connect } from 'node:net';
import { startServer } from '../../api/server';
import { ownQueues, testConfig } from '../support/api';

/**
 * An idle keep-alive connection outlives the idle timeouts of clients (Node's fetch: 4 s), so the
 * client, not the API, closes it: with Node's 5 s default the API closed sockets as clients reused
 * them, and a POST failed with UND_ERR_SOCKET (issue 37).
 */
let server: Awaited<ReturnType<typeof startServer>>;
let port: number;

beforeAll(async () => {
  server = await startServer(testConfig({ PORT: '0', HTTP_HEADERS_TIMEOUT_MS: '2000', ...ownQueues('keepalive') }));
  const address = server.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});

afterAll(async () => {
  await server?.close();
});

test('a connection idle for longer than Node 20 default keep-alive (5 s) still answers its next request', async () => {
  const socket = connect(port, '127.0.0.1');
  const statuses: string[] = [];
  let closed = false;
  socket.on('data', (d: Buffer) => {
    for (const m of d.toString().matchAll(/HTTP\/1\.1 (\d{3})/g)) statuses.push(m[1] as string);
  });
  socket.on('close', () => (closed = true));
  const ask = () => socket.write('GET /openapi.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
  ask();
  while (statuses.length === 0 && !closed) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 7000));
  expect(closed).toBe(false);
  ask();
  await new Promise((r) => setTimeout(r, 1000));
  socket.destroy();
  expect(statuses).toEqual(['200', '200']);
}, 30_000);
