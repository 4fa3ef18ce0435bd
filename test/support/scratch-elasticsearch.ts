import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '../..');

export interface ScratchElasticsearch {
  url: string;
  /** Stops the node (SIGTERM, as an operator's restart would). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it is green/yellow. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
}

/**
 * A second real Elasticsearch node, from the stack's build (dev/elasticsearch/es.sh with
 * ES_NODE_DIR), on ports and a data directory of its own: a test can stop and restart it without
 * taking the shared node away from the other test files.
 */
export async function startScratchElasticsearch(): Promise<ScratchElasticsearch> {
  const dir = mkdtempSync(path.join(tmpdir(), 'lj-es-'));
  const [port, transport] = [await freePort(), await freePort()];
  const env = {
    ...process.env,
    STACK_DIR: path.join(ROOT, '.stack'),
    ES_NODE_DIR: dir,
    ES_PORT: String(port),
    ES_TRANSPORT_PORT: String(transport),
  };
  const es = async (cmd: 'start' | 'stop') => {
    await run('bash', [path.join(ROOT, 'dev/elasticsearch/es.sh'), cmd], { env, timeout: 180_000 });
  };
  await es('start');
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => es('stop'),
    start: () => es('start'),
    close: async () => {
      await es('stop');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
