/**
 * `promise`, or a rejection saying `${what} took longer than N s` once `ms` have passed; the timer
 * is cleared either way. The work itself is not stopped: callers that can stop it do so themselves.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
