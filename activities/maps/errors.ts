/**
 * Typed failures of the maps adapters. Each carries a stable `type` (the Temporal ApplicationFailure
 * type) and says whether a retry can help; a rate limit carries the provider's own wait.
 */
export class MapsError extends Error {
  override readonly name: string = 'MapsError';

  constructor(
    readonly type: string,
    message: string,
    readonly retryable: boolean,
    options: { cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }

  /** Set on quota / rate-limit answers: when the provider says to try again. */
  readonly retryAfterMs: number | undefined;
}

/** The spec's words for an unknown place (§7: "business not found"). */
export const notFound = (what: string) => new MapsError('NotFound', `business not found: ${what}`, false);

/** Retry-After in seconds or as a date; undefined when absent or unreadable. */
export function retryAfterHeaderMs(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(1000, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(1000, date - now);
}
