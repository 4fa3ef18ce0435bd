import pino from 'pino';

export type Logger = pino.Logger;

/** JSON logs on stdout; every request's lines carry its request id (api/middleware/request-id.ts). */
export function createLogger(level: string, name = 'leadjobs'): Logger {
  return pino({ name, level, base: { pid: process.pid } });
}
