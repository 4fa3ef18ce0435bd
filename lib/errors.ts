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

export const badRequest = (detail: string) => new AppError(400, detail, 'bad_request');
export const notFound = (detail = 'not found') => new AppError(404, detail, 'not_found');
