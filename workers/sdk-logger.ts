import { DefaultLogger, type LogEntry, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../lib/logger';
import type { Config } from '../lib/config';

/**
 * What the Temporal SDK says at a warning level but is expected here: the registries' and the
 * providers' queues run activities only, and a Worker without workflows warns about it once per queue
 * at every start. Kept, at debug.
 */
const EXPECTED = [/^No workflows registered, not polling for workflow tasks/];

/**
 * The SDK's log lines (the Worker's state changes, the Rust core's warnings) as the worker's own JSON
 * lines, under `component: "temporal-sdk"`, instead of the SDK's plain-text format on stderr: one
 * format for an operator's log pipeline.
 */
export function sdkLogger(logger: Logger, level: Config['LOG_LEVEL']): DefaultLogger {
  const sdk = logger.child({ component: 'temporal-sdk' });
  return new DefaultLogger(sdkLogLevel(level), (entry: LogEntry) => {
    const method = EXPECTED.some((re) => re.test(entry.message)) ? 'debug' : PINO_METHOD[entry.level];
    sdk[method](entry.meta ?? {}, entry.message);
  });
}

const PINO_METHOD: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

function sdkLogLevel(level: Config['LOG_LEVEL']): LogLevel {
  // The SDK's INFO lines are per-queue state changes and bundler stats: operators want them only when debugging.
  const map: Record<Config['LOG_LEVEL'], LogLevel> = {
    fatal: 'ERROR',
    error: 'ERROR',
    warn: 'WARN',
    info: 'WARN',
    debug: 'DEBUG',
    trace: 'TRACE',
    silent: 'ERROR',
  };
  return map[level];
}
