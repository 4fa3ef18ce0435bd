import { extname, join } from 'node:path';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * A worker thread running the module `<dir>/<name>` next to the caller. Under tsx and Jest the
 * sources are TypeScript: the thread registers tsx's require hook before loading its file; the
 * compiled build runs the .js file as it is. `callerFile` is the caller's `__filename` (its
 * extension tells the two apart).
 */
export function startThread(dir: string, name: string, callerFile: string, options: WorkerOptions = {}): Worker {
  const file = join(dir, `${name}${extname(callerFile)}`);
  return file.endsWith('.ts')
    ? new Worker(`require('tsx/cjs'); require(${JSON.stringify(file)});`, { ...options, eval: true })
    : new Worker(file, options);
}
