/**
 * Typed errors the API maps to responses in one place (api/middleware/errors.ts).
 * Throw these from handlers and repositories; never build error responses by hand.
 */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    /** Short machine word for the `{success:false, error}` shape (media, integrations). */
    readonly error?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
  }
}

export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
}

/** 422 with `detail` as an array of {type, loc, msg} (spec §7). */
export class ValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
  }
}

/**
 * What db/ and the services throw when a request cannot be done as asked; they know nothing of HTTP.
 * The error middleware maps each kind to its status (conflict 409, invalid 400, not_found 404).
 * `error` is the machine word of the `{success:false, error}` shape where a route family uses it.
 */
export type DomainErrorKind = 'conflict' | 'invalid' | 'not_found';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    readonly detail: string,
    readonly error?: string,
  ) {
    super(detail);
  }
}

export const DOMAIN_STATUS: Record<DomainErrorKind, number> = { conflict: 409, invalid: 400, not_found: 404 };
export const conflict = (detail: string, error = 'conflict') => new DomainError('conflict', detail, error);
export const invalid = (detail: string, error = 'bad_request') => new DomainError('invalid', detail, error);

export const badRequest = (detail: string) => new AppError(400, detail, 'bad_request');
export const notFound = (detail = 'not found') => new AppError(404, detail, 'not_found');
