/**
 * The API's and the worker's Temporal connections speak TLS as configured. First on the wire: a
 * stand-in frontend (HTTP/2 over TLS, requiring a client certificate signed by its CA) answers the
 * gRPC calls each connection makes first and records what arrived: the client certificate, the SNI
 * name and the API key header. Then for real: a TLS-terminating proxy that requires the client
 * certificate (as an operator's load balancer or Temporal Cloud's edge does) in front of the
 * stack's Temporal, and a crawlSite job submitted to the API and run by a worker, both connected
 * only through it.
 */
import { execFileSync } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import {
  createSecureServer,
  type Http2SecureServer,
  type ServerHttp2Stream,
  type IncomingHttpHeaders,
} from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer as createTlsServer, type Server as TlsServer, type TLSSocket } from 'node:tls';
import { NativeConnection } from '@temporalio/worker';
import { parseConfig } from '../../lib/config';
import { connectTemporalLazy, pingTemporal, temporalConnectionOptions } from '../../lib/temporal';
import { bearer, ownQueues, startTestApi } from '../support/api';
import { caller, waitForStatus } from '../support/jobs';
import { startTestWorker } from '../support/worker';
import { startWebsite } from '../stand-ins/website';

interface Seen {
  path: string;
  authorization?: string;
  servername?: string;
  clientCN?: string;
}

let dir: string;
let server: Http2SecureServer;
let port: number;
const seen: Seen[] = [];

function openssl(...args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
}

/** A CA, a server certificate for temporal.test and a client certificate, as an operator would have. */
function makeCertificates(): void {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=leadjobs test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  for (const [name, cn, ext] of [
    [
      'server',
      'temporal.test',
      'subjectAltName=DNS:temporal.test\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n',
    ],
    ['client', 'leadjobs-client', 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n'],
  ] as const) {
    writeFileSync(path.join(dir, `${name}.ext`), ext);
    openssl('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      `${name}.pem`,
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
    );
  }
}

// gRPC frames: a 0 byte (uncompressed), the length, the protobuf message.
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}
// grpc.health.v1.HealthCheckResponse{status: SERVING}; every other call gets its empty (default) response.
const SERVING = Buffer.from([0x08, 0x01]);

function answer(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
  const socket = stream.session?.socket as TLSSocket | undefined;
  seen.push({
    path: String(headers[':path']),
    authorization: headers.authorization,
    servername: socket?.servername || undefined,
    clientCN: socket?.getPeerCertificate().subject?.CN as string | undefined,
  });
  stream.resume();
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(frame(String(headers[':path']).includes('grpc.health') ? SERVING : Buffer.alloc(0)));
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'temporal-tls-wire-'));
  makeCertificates();
  const read = (f: string) => readFileSync(path.join(dir, f));
  server = createSecureServer({
    key: read('server.key'),
    cert: read('server.pem'),
    ca: read('ca.pem'),
    requestCert: true,
    rejectUnauthorized: true,
  });
  server.on('stream', answer);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  seen.length = 0;
});

const tlsEnv = () => ({
  MINIO_ACCESS_KEY: 'k',
  MINIO_SECRET_KEY: 's',
  // An IP address: the certificate is valid only because TEMPORAL_TLS_SERVER_NAME names it.
  TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
  TEMPORAL_TLS_CERT_PATH: path.join(dir, 'client.pem'),
  TEMPORAL_TLS_KEY_PATH: path.join(dir, 'client.key'),
  TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem'),
  TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
  TEMPORAL_API_KEY: 'test-api-key',
});

describe('Temporal over TLS', () => {
  test('the API connection presents the client certificate, the server name and the API key', async () => {
    const temporal = connectTemporalLazy(parseConfig(tlsEnv()));
    try {
      await pingTemporal(temporal, 10000);
    } finally {
      await temporal.connection.close();
    }
    expect(seen).toContainEqual({
      path: '/grpc.health.v1.Health/Check',
      authorization: 'Bearer test-api-key',
      servername: 'temporal.test',
      clientCN: 'leadjobs-client',
    });
  });

  test('the worker connection presents the client certificate, the server name and the API key', async () => {
    const connection = await NativeConnection.connect(temporalConnectionOptions(parseConfig(tlsEnv())));
    await connection.close();
    expect(seen.length).toBeGreaterThan(0);
    for (const call of seen)
      expect(call).toMatchObject({
        authorization: 'Bearer test-api-key',
        servername: 'temporal.test',
        clientCN: 'leadjobs-client',
      });
  });

  test('without TLS settings the connection does not reach a TLS frontend', async () => {
    const { TEMPORAL_ADDRESS, MINIO_ACCESS_KEY, MINIO_SECRET_KEY } = tlsEnv();
    const temporal = connectTemporalLazy(parseConfig({ TEMPORAL_ADDRESS, MINIO_ACCESS_KEY, MINIO_SECRET_KEY }));
    try {
      await expect(pingTemporal(temporal, 2000)).rejects.toThrow();
    } finally {
      await temporal.connection.close();
    }
    expect(seen).toEqual([]);
  });
});

describe('a job through a TLS-terminating proxy in front of the real Temporal', () => {
  interface Handshake {
    servername?: string;
    clientCN?: string;
  }
  const handshakes: Handshake[] = [];
  let refused = 0;
  let proxy: TlsServer;
  let proxyPort: number;

  beforeAll(async () => {
    const read = (f: string) => readFileSync(path.join(dir, f));
    const [host = '127.0.0.1', upstreamPort = '7233'] = (process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233').split(':');
    // TLS ends here; the HTTP/2 (gRPC) bytes go on in the clear to the dev server, which takes HTTP/2 without TLS.
    proxy = createTlsServer(
      {
        key: read('server.key'),
        cert: read('server.pem'),
        ca: read('ca.pem'),
        requestCert: true,
        rejectUnauthorized: true,
        ALPNProtocols: ['h2'],
      },
      (socket) => {
        handshakes.push({
          servername: socket.servername || undefined,
          clientCN: socket.getPeerCertificate().subject?.CN as string | undefined,
        });
        const upstream = tcpConnect(Number(upstreamPort), host);
        socket.pipe(upstream).pipe(socket);
        const close = () => {
          socket.destroy();
          upstream.destroy();
        };
        socket.on('error', close);
        upstream.on('error', close);
      },
    );
    proxy.on('tlsClientError', () => {
      refused += 1;
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyPort = (proxy.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => proxy.close(resolve));
  });

  const viaProxy = () => ({
    TEMPORAL_ADDRESS: `127.0.0.1:${proxyPort}`,
    TEMPORAL_TLS_CERT_PATH: path.join(dir, 'client.pem'),
    TEMPORAL_TLS_KEY_PATH: path.join(dir, 'client.key'),
    TEMPORAL_TLS_CA_PATH: path.join(dir, 'ca.pem'),
    TEMPORAL_TLS_SERVER_NAME: 'temporal.test',
    ...ownQueues('temporal-tls'),
  });

  test('the API starts a crawlSite job and a worker runs it to completed, each connected only over TLS with its client certificate', async () => {
    const site = await startWebsite();
    const api = await startTestApi({ RATE_LIMIT_ENABLED: 'false', ...viaProxy() });
    const worker = await startTestWorker({
      types: ['crawlSite'],
      identity: 'tls-worker',
      overrides: { ...viaProxy(), USER_URL_ALLOW_HOSTS: '127.0.0.1' },
    });
    try {
      const c = caller(api, bearer(await api.newClient()));
      const res = await c.post('/api/v1/jobs/crawlSite/submit', { payload: { url: `${site.baseUrl}/`, max_pages: 2 } });
      expect(res.status).toBe(201);
      const { job_id } = await c.json<{ job_id: string }>(res);
      expect(await waitForStatus(c, job_id, ['completed', 'failed', 'cancelled'], 60_000)).toMatchObject({
        status: 'completed',
      });
      const results = await c.json<{ data: { pages_crawled: number } }>(await c.get(`/api/v1/jobs/${job_id}/results`));
      expect(results.data.pages_crawled).toBe(2);
    } finally {
      await worker.stop();
      await api.close();
      await site.close();
    }
    // The API's connection and the worker's: every one presented the client certificate and the name.
    expect(handshakes.length).toBeGreaterThanOrEqual(2);
    for (const h of handshakes) expect(h).toEqual({ servername: 'temporal.test', clientCN: 'leadjobs-client' });
  }, 120_000);

  test('the proxy refuses a connection without the client certificate: no job could start through it', async () => {
    const { TEMPORAL_TLS_CERT_PATH: _c, TEMPORAL_TLS_KEY_PATH: _k, ...noCertificate } = viaProxy();
    const before = refused;
    const temporal = connectTemporalLazy(
      parseConfig({ ...noCertificate, MINIO_ACCESS_KEY: 'k', MINIO_SECRET_KEY: 's' }),
    );
    try {
      await expect(pingTemporal(temporal, 3000)).rejects.toThrow();
    } finally {
      await temporal.connection.close();
    }
    expect(refused).toBeGreaterThan(before);
  });
});
