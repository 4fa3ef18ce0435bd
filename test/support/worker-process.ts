/** A worker in its own process (for the SIGKILL durability test): `tsx test/support/worker-process.ts <identity> <types...>`. */
import type { JobType } from '../../jobs';
import { startTestWorker } from './worker';

const [identity = 'worker-process', ...types] = process.argv.slice(2);
startTestWorker({ identity, types: types as JobType[] }).then(
  (worker) => {
    process.stdout.write('ready\n');
    process.once('SIGTERM', () => {
      void worker.stop().then(() => process.exit(0));
    });
  },
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
