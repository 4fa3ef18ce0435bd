import { extname, join } from 'node:path';
import { parentPort, Worker, type WorkerOptions } from 'node:worker_threads';

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

/** A task ran past the pool's deadline; the thread running it was terminated. */
export class ThreadTimeoutError extends Error {}

/** The thread running a task died under it (out of memory, an exit) or could not start. */
export class ThreadStoppedError extends Error {}

/** What a pool's thread posts: once `{ ready }` when its modules are loaded, then one answer per task. */
export type ThreadAnswer<Out> = { ready: true } | { id: number; ok: Out } | { id: number; failed: string };

/**
 * The thread's side of ThreadPool: `handle` runs each task posted to this thread, one at a time.
 * What it returns is the task's result; what it throws fails the task with the error's message.
 */
export function serveTasks<In, Out>(handle: (input: In) => Out): void {
  const port = parentPort;
  if (!port) throw new Error('serveTasks runs in a worker thread');
  port.on('message', ({ id, input }: { id: number; input: In }) => {
    let answer: ThreadAnswer<Out>;
    try {
      answer = { id, ok: handle(input) };
    } catch (err) {
      answer = { id, failed: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(answer);
  });
  port.postMessage({ ready: true } satisfies ThreadAnswer<Out>);
}

export interface ThreadPoolOptions {
  /** Threads at most; each runs one task at a time, the others wait in order. */
  size: number;
  /** A task still running after this long (counted from when its thread took it) fails with ThreadTimeoutError. */
  timeoutMs: number;
  /** A thread without work this long ends; the next task starts another. */
  idleMs?: number;
}

interface Task<In, Out> {
  id: number;
  input: In;
  resolve: (out: Out) => void;
  reject: (err: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
  timer?: NodeJS.Timeout;
}

interface Slot<In, Out> {
  worker: Worker;
  /** Resolves once the thread has loaded its modules; rejects when it stops before that. */
  ready: Promise<void>;
  stopped: (reason: unknown) => void;
  task?: Task<In, Out>;
  idle?: NodeJS.Timeout;
}

/**
 * CPU-bound work off the event loop, in up to `size` worker threads that stay up between tasks
 * (`start` makes one: startThread of a module that calls serveTasks). A synchronous task cannot be
 * interrupted, so a task past its deadline, or whose signal aborts, has its thread terminated; so
 * has a thread that dies (its task fails with ThreadStoppedError). The next task starts a fresh
 * one. Threads are unref'd while idle: an idle pool never keeps the process alive.
 */
export class ThreadPool<In, Out> {
  private readonly slots: Slot<In, Out>[] = [];
  private readonly queue: Task<In, Out>[] = [];
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly start: () => Worker,
    private readonly options: ThreadPoolOptions,
  ) {}

  run(input: In, signal?: AbortSignal): Promise<Out> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.closed) return Promise.reject(new ThreadStoppedError('the thread pool is closed'));
    return new Promise<Out>((resolve, reject) => {
      const task: Task<In, Out> = { id: ++this.nextId, input, resolve, reject, signal };
      if (signal) {
        task.onAbort = () => this.abort(task, signal.reason);
        signal.addEventListener('abort', task.onAbort, { once: true });
      }
      this.queue.push(task);
      this.pump();
    });
  }

  /** Starts every thread now and resolves once each has loaded its modules (else the first tasks wait for that). */
  async warm(): Promise<void> {
    while (this.slots.length < this.options.size) this.rest(this.spawn());
    await Promise.all(this.slots.map((slot) => slot.ready));
  }

  /** Ends every thread; waiting and running tasks fail with ThreadStoppedError. */
  async close(): Promise<void> {
    this.closed = true;
    for (const task of this.queue.splice(0))
      this.settle(task, { failed: new ThreadStoppedError('the thread pool closed') });
    await Promise.all([...this.slots].map((slot) => this.drop(slot, new ThreadStoppedError('the thread pool closed'))));
  }

  private pump(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.task);
      if (!slot) {
        if (this.slots.length >= this.options.size) return;
        slot = this.spawn();
      }
      this.assign(slot, this.queue.shift() as Task<In, Out>);
    }
  }

  private spawn(): Slot<In, Out> {
    const worker = this.start();
    let markReady: () => void = () => undefined;
    let stopped: (reason: unknown) => void = () => undefined;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      stopped = reject;
    });
    // Reported to the task waiting for the thread, or to warm(); this only keeps it from going unhandled.
    ready.catch(() => undefined);
    const slot: Slot<In, Out> = { worker, ready, stopped };
    worker.on('message', (m: ThreadAnswer<Out>) => {
      if ('ready' in m) return markReady();
      const task = slot.task;
      if (!task || task.id !== m.id) return;
      slot.task = undefined;
      this.settle(task, 'ok' in m ? m : { failed: new Error(m.failed) });
      this.rest(slot);
      this.pump();
    });
    worker.on('error', (err) => void this.drop(slot, new ThreadStoppedError(`the thread stopped: ${err.message}`)));
    worker.on('exit', () => void this.drop(slot, new ThreadStoppedError('the thread stopped')));
    this.slots.push(slot);
    return slot;
  }

  private assign(slot: Slot<In, Out>, task: Task<In, Out>): void {
    clearTimeout(slot.idle);
    slot.task = task;
    slot.worker.ref();
    // The deadline starts once the thread has loaded its modules and takes the task.
    slot.ready.then(
      () => {
        if (slot.task !== task) return;
        task.timer = setTimeout(
          () => void this.drop(slot, new ThreadTimeoutError(`it took longer than ${this.options.timeoutMs} ms`)),
          this.options.timeoutMs,
        );
        try {
          slot.worker.postMessage({ id: task.id, input: task.input });
        } catch (err) {
          // An input that cannot be copied to the thread (a function, say) fails its task; the thread serves on.
          slot.task = undefined;
          this.settle(task, { failed: err });
          this.rest(slot);
          this.pump();
        }
      },
      () => undefined /* drop() has failed the task */,
    );
  }

  private rest(slot: Slot<In, Out>): void {
    slot.worker.unref();
    slot.idle = setTimeout(
      () => void this.drop(slot, new ThreadStoppedError('idle')),
      this.options.idleMs ?? 60_000,
    ).unref();
  }

  private abort(task: Task<In, Out>, reason: unknown): void {
    const queued = this.queue.indexOf(task);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settle(task, { failed: reason });
      return;
    }
    const slot = this.slots.find((s) => s.task === task);
    if (slot) void this.drop(slot, reason);
  }

  /** The slot's thread is terminated and forgotten; its task, if any, fails with `reason`. */
  private async drop(slot: Slot<In, Out>, reason: unknown): Promise<void> {
    const at = this.slots.indexOf(slot);
    if (at < 0) return;
    this.slots.splice(at, 1);
    clearTimeout(slot.idle);
    slot.stopped(reason);
    const task = slot.task;
    slot.task = undefined;
    if (task) this.settle(task, { failed: reason });
    this.pump();
    await slot.worker.terminate();
  }

  private settle(task: Task<In, Out>, outcome: { ok: Out } | { failed: unknown }): void {
    clearTimeout(task.timer);
    if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    if ('ok' in outcome) task.resolve(outcome.ok);
    else task.reject(outcome.failed);
  }
}
