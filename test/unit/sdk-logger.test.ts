import { Writable } from 'node:stream';
import pino from 'pino';
import { sdkLogger } from '../../workers/sdk-logger';

/** A pino logger whose JSON lines land in `lines`. */
function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean))
        lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ name: 'worker', level }, stream), lines };
}

test("the SDK's warnings become the worker's JSON lines, with their fields", () => {
  const { logger, lines } = capture('info');
  sdkLogger(logger, 'info').warn('Worker failed to poll', { sdkComponent: 'worker', taskQueue: 'leadjobs-crawl-site' });
  expect(lines).toEqual([
    expect.objectContaining({
      level: 40,
      name: 'worker',
      component: 'temporal-sdk',
      msg: 'Worker failed to poll',
      taskQueue: 'leadjobs-crawl-site',
      sdkComponent: 'worker',
    }),
  ]);
});

test('an activity-only queue without workflows is no warning: it is said at debug only', () => {
  const atInfo = capture('info');
  sdkLogger(atInfo.logger, 'info').warn('No workflows registered, not polling for workflow tasks', {
    taskQueue: 'leadjobs-registry-sec',
  });
  expect(atInfo.lines).toEqual([]);

  const atDebug = capture('debug');
  sdkLogger(atDebug.logger, 'debug').warn('No workflows registered, not polling for workflow tasks', {
    taskQueue: 'leadjobs-registry-sec',
  });
  expect(atDebug.lines).toEqual([expect.objectContaining({ level: 20, taskQueue: 'leadjobs-registry-sec' })]);
});

test("the SDK's INFO lines (state changes, bundler stats) show only when the worker logs at debug", () => {
  const atInfo = capture('info');
  sdkLogger(atInfo.logger, 'info').info('Worker state changed', { state: 'RUNNING' });
  expect(atInfo.lines).toEqual([]);

  const atDebug = capture('debug');
  sdkLogger(atDebug.logger, 'debug').info('Worker state changed', { state: 'RUNNING' });
  expect(atDebug.lines).toEqual([
    expect.objectContaining({ level: 30, msg: 'Worker state changed', state: 'RUNNING' }),
  ]);
});
