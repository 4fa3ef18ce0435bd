import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, waitFor } from './processes';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '../..');
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** One private backing server: `kill` stops it hard (as a crash or a pulled plug), `start` brings it back on the same port and data. */
export interface PrivateServer {
  name: 'postgres' | 'temporal' | 'elasticsearch' | 'minio';
  kill(): Promise<void>;
  start(): Promise<void>;
}

export type ServerName = PrivateServer['name'];

export interface PrivateStack {
  /** Config pointing the API and worker at the private servers (DATABASE_URL, TEMPORAL_ADDRESS, ELASTICSEARCH_URL, MINIO_*). */
  env: Record<string, string>;
  /** The private servers started, by name. */
  servers: Partial<Record<ServerName, PrivateServer>>;
  close(): Promise<void>;
}

const stackDir = () => process.env.STACK_DIR ?? path.join(ROOT, '.stack');

/**
 * Postgres, Temporal, Elasticsearch and MinIO (those in `which`) of a test's own, in a temp dir on
 * free ports, from the binaries the shared stack already has (PostgreSQL 15 from Debian,
 * $STACK_DIR/bin/temporal and minio, the Elasticsearch build of dev/elasticsearch with a 512 MB
 * heap). A test may kill and restart each of them at will; the shared stack the other test files
 * use is never touched (a server not in `which` is the shared one, through the environment).
 * Temporal keeps its state in a file (a restart keeps the workflows), the others in the dir.
 */
export async function startPrivateStack(which: readonly ServerName[]): Promise<PrivateStack> {
  const dir = mkdtempSync(path.join(tmpdir(), 'lj-private-'));
  // Postgres runs as its own user when the tests run as root: it must reach its folder inside.
  chmodSync(dir, 0o755);
  const starters: Record<ServerName, (d: string) => Promise<Started>> = {
    postgres: privatePostgres,
    temporal: privateTemporal,
    minio: privateMinio,
    elasticsearch: privateElasticsearch,
  };
  const results = await Promise.allSettled(which.map((name) => starters[name](dir)));
  const started = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const close = async () => {
    await Promise.allSettled(started.map((s) => s.close()));
    rmSync(dir, { recursive: true, force: true });
  };
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  return {
    env: Object.assign({}, ...started.map((s) => s.env)) as Record<string, string>,
    servers: Object.fromEntries(started.map((s) => [s.server.name, s.server])),
    close,
  };
}

interface Started {
  env: Record<string, string>;
  server: PrivateServer;
  close(): Promise<void>;
}

/** initdb refuses to run as root: as root, Postgres runs as the postgres user (as dev/stack does). */
const asPostgres = (cmd: string, args: string[]) =>
  userInfo().uid === 0 ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args);

async function privatePostgres(dir: string): Promise<Started> {
  const home = path.join(dir, 'pg');
  mkdirSync(path.join(home, 'run'), { recursive: true });
  if (userInfo().uid === 0) {
    const ids = await run('id', ['-u', 'postgres']).then((r) => Number(r.stdout.trim()));
    const gid = await run('id', ['-g', 'postgres']).then((r) => Number(r.stdout.trim()));
    chownSync(home, ids, gid);
    chownSync(path.join(home, 'run'), ids, gid);
  }
  const port = await freePort();
  const data = path.join(home, 'data');
  await asPostgres(`${PG_BIN}/initdb`, [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--locale=C.UTF-8',
  ]);
  // No fsync: a test database; the crash this test makes is of the server process, not of the disk.
  const opts = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories=${path.join(home, 'run')} -c max_connections=200 -c fsync=off`;
  const start = async () => {
    await asPostgres(`${PG_BIN}/pg_ctl`, [
      '-D',
      data,
      '-l',
      path.join(home, 'postgres.log'),
      '-w',
      '-t',
      '60',
      '-o',
      opts,
      'start',
    ]);
  };
  const stop = async (mode: 'immediate' | 'fast') => {
    await asPostgres(`${PG_BIN}/pg_ctl`, ['-D', data, '-m', mode, '-w', 'stop']).catch(() => undefined);
  };
  await start();
  await run(`${PG_BIN}/psql`, [
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
    '-U',
    'postgres',
    '-d',
    'postgres',
    '-XtAq',
    '-c',
    'create database leadjobs',
  ]);
  return {
    env: { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/leadjobs` },
    server: { name: 'postgres', kill: () => stop('immediate'), start },
    close: () => stop('immediate'),
  };
}

/** A long-running child process that `kill` SIGKILLs and `start` spawns again with the same arguments. */
function childServer(
  name: PrivateServer['name'],
  spawnIt: () => ChildProcess,
  ready: () => Promise<boolean>,
  timeoutMs: number,
): PrivateServer & { close(): Promise<void> } {
  let child: ChildProcess | undefined;
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  return {
    name,
    kill,
    start: async () => {
      child = spawnIt();
      await waitFor(ready, timeoutMs, `private ${name}`);
    },
    close: kill,
  };
}

async function privateTemporal(dir: string): Promise<Started> {
  const bin = process.env.TEMPORAL_CLI_PATH ?? path.join(stackDir(), 'bin/temporal');
  const [port, uiPort] = [await freePort(), await freePort()];
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--ui-port',
    String(uiPort),
    '--db-filename',
    path.join(dir, 'temporal.db'),
    '--log-level',
    'error',
    '--search-attribute',
    'ClientId=Keyword',
    '--search-attribute',
    'JobType=Keyword',
    '--search-attribute',
    'JobId=Keyword',
    '--search-attribute',
    'CampaignId=Keyword',
    '--dynamic-config-value',
    'matching.useNewMatcher=true',
    '--dynamic-config-value',
    'matching.priorityLevels=11',
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
  ];
  const ready = async () =>
    (
      await run(bin, ['operator', 'cluster', 'health', '--address', `127.0.0.1:${port}`], { timeout: 5000 })
    ).stdout.includes('SERVING');
  const server = childServer('temporal', () => spawn(bin, args, { stdio: 'ignore' }), ready, 90_000);
  await server.start();
  return { env: { TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_NAMESPACE: 'default' }, server, close: server.close };
}

async function privateMinio(dir: string): Promise<Started> {
  const bin = process.env.MINIO_BIN ?? path.join(stackDir(), 'bin/minio');
  const [port, consolePort] = [await freePort(), await freePort()];
  const accessKey = 'privateadmin';
  const secretKey = 'private-minio-secret';
  const data = path.join(dir, 'minio');
  mkdirSync(data, { recursive: true });
  const endpoint = `http://127.0.0.1:${port}`;
  const server = childServer(
    'minio',
    () =>
      spawn(
        bin,
        ['server', data, '--address', `127.0.0.1:${port}`, '--console-address', `127.0.0.1:${consolePort}`, '--quiet'],
        { env: { ...process.env, MINIO_ROOT_USER: accessKey, MINIO_ROOT_PASSWORD: secretKey }, stdio: 'ignore' },
      ),
    async () => (await fetch(`${endpoint}/minio/health/ready`)).ok,
    60_000,
  );
  await server.start();
  return {
    env: {
      MINIO_ENDPOINT: endpoint,
      MINIO_ACCESS_KEY: accessKey,
      MINIO_SECRET_KEY: secretKey,
      MEDIA_PUBLIC_URL: endpoint,
    },
    server,
    close: server.close,
  };
}

/** The dev/elasticsearch build as a node of its own (es.sh with ES_NODE_DIR), killed with SIGKILL through its pid file. */
async function privateElasticsearch(dir: string): Promise<Started> {
  const nodeDir = path.join(dir, 'es');
  const [port, transport] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    STACK_DIR: stackDir(),
    ES_NODE_DIR: nodeDir,
    ES_PORT: String(port),
    ES_TRANSPORT_PORT: String(transport),
    ES_JAVA_OPTS: '-Xms512m -Xmx512m',
    ES_START_TIMEOUT: '240',
  };
  const start = async () => {
    await run('bash', [path.join(ROOT, 'dev/elasticsearch/es.sh'), 'start'], { env, timeout: 300_000 });
  };
  const kill = async () => {
    let pid: number;
    try {
      pid = Number(readFileSync(path.join(nodeDir, 'run/elasticsearch.pid'), 'utf8').trim());
    } catch {
      return;
    }
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      return;
    }
    await waitFor(
      async () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      30_000,
      'elasticsearch to exit',
    );
  };
  await start();
  return {
    env: { ELASTICSEARCH_URL: `http://127.0.0.1:${port}` },
    server: { name: 'elasticsearch', kill, start },
    close: kill,
  };
}
