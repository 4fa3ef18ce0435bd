/**
 * A worker thread for test/unit/thread-pool.test.ts: each task says what the thread does with it
 * (lib/threads.ts serveTasks on the thread's side).
 */
import { threadId } from 'node:worker_threads';
import { serveTasks } from '../../lib/threads';

export type PoolTask =
  { kind: 'double'; value: number } | { kind: 'throw'; message: string } | { kind: 'spin' } | { kind: 'exit' };

serveTasks<PoolTask, { value: number; thread: number }>((task) => {
  switch (task.kind) {
    case 'double':
      return { value: task.value * 2, thread: threadId };
    case 'throw':
      throw new Error(task.message);
    case 'spin':
      for (;;);
    case 'exit':
      process.exit(3);
  }
});
