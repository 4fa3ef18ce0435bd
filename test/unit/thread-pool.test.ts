import { startThread, ThreadPool, ThreadStoppedError, ThreadTimeoutError } from '../../lib/threads';
import type { PoolTask } from '../support/pool-thread';

// lib/threads.ts ThreadPool with real worker threads (test/support/pool-thread.ts): results, a
// task's own failure, a task past its deadline, a thread that dies, a cancel. Every failure leaves
// the pool serving the next task.

type Out = { value: number; thread: number };
const pools: ThreadPool<PoolTask, Out>[] = [];
function pool(size: number, timeoutMs = 60_000): ThreadPool<PoolTask, Out> {
  const p = new ThreadPool<PoolTask, Out>(() => startThread(`${__dirname}/../support`, 'pool-thread', __filename), {
    size,
    timeoutMs,
  });
  pools.push(p);
  return p;
}
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

test('tasks are answered with their own results, spread over the threads', async () => {
  const p = pool(2);
  await p.warm();
  const out = await Promise.all(Array.from({ length: 20 }, (_, i) => p.run({ kind: 'double', value: i })));
  expect(out.map((o) => o.value)).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
  expect(new Set(out.map((o) => o.thread)).size).toBe(2);
});

test("a task that throws fails with the thread's message; the thread serves the next task", async () => {
  const p = pool(1);
  await expect(p.run({ kind: 'throw', message: 'no such page' })).rejects.toThrow('no such page');
  const first = await p.run({ kind: 'double', value: 1 });
  const second = await p.run({ kind: 'double', value: 2 });
  expect([first.value, second.value]).toEqual([2, 4]);
  expect(second.thread).toBe(first.thread);
});

test('a task past its deadline fails with ThreadTimeoutError and its thread is replaced', async () => {
  const p = pool(1, 300);
  const spinning = p.run({ kind: 'spin' });
  const queued = p.run({ kind: 'double', value: 21 });
  await expect(spinning).rejects.toBeInstanceOf(ThreadTimeoutError);
  await expect(queued).resolves.toMatchObject({ value: 42 });
});

test('a thread that exits fails its task with ThreadStoppedError; the next task gets a new thread', async () => {
  const p = pool(1);
  const before = await p.run({ kind: 'double', value: 1 });
  await expect(p.run({ kind: 'exit' })).rejects.toBeInstanceOf(ThreadStoppedError);
  const after = await p.run({ kind: 'double', value: 5 });
  expect(after.value).toBe(10);
  expect(after.thread).not.toBe(before.thread);
});

test("a cancelled task fails with the signal's reason, running or waiting, and the pool goes on", async () => {
  const p = pool(1);
  const running = new AbortController();
  const waiting = new AbortController();
  const spinning = p.run({ kind: 'spin' }, running.signal);
  const queued = p.run({ kind: 'double', value: 3 }, waiting.signal);
  const next = p.run({ kind: 'double', value: 4 });
  waiting.abort(new Error('job cancelled (waiting)'));
  running.abort(new Error('job cancelled (running)'));
  await expect(queued).rejects.toThrow('job cancelled (waiting)');
  await expect(spinning).rejects.toThrow('job cancelled (running)');
  await expect(next).resolves.toMatchObject({ value: 8 });
  const aborted = new AbortController();
  aborted.abort(new Error('already cancelled'));
  await expect(p.run({ kind: 'double', value: 1 }, aborted.signal)).rejects.toThrow('already cancelled');
});

test('a task whose input cannot be copied to a thread fails at once; the pool serves the next task', async () => {
  const p = pool(1);
  const uncopyable = { kind: 'double', value: 1, callback: () => 1 } as unknown as PoolTask;
  await expect(p.run(uncopyable)).rejects.toThrow(/could not be cloned/);
  await expect(p.run({ kind: 'double', value: 6 })).resolves.toMatchObject({ value: 12 });
});

test('a closed pool refuses new tasks and fails the ones it held', async () => {
  const p = pool(1);
  const held = Promise.allSettled([p.run({ kind: 'spin' }), p.run({ kind: 'double', value: 1 })]);
  await p.close();
  const [spinning, queued] = await held;
  expect(spinning).toMatchObject({ status: 'rejected', reason: expect.any(ThreadStoppedError) });
  expect(queued).toMatchObject({ status: 'rejected', reason: expect.any(ThreadStoppedError) });
  await expect(p.run({ kind: 'double', value: 1 })).rejects.toBeInstanceOf(ThreadStoppedError);
});
