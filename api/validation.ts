import type { z, ZodError } from 'zod';
import { ValidationError, type ValidationIssue } from '../lib/errors';

/** zod issues -> the spec's 422 items {type, loc, msg}; loc starts with body/query/path. */
export function issuesFromZod(err: ZodError, prefix: (string | number)[]): ValidationIssue[] {
  return err.issues.map((issue) => {
    const loc = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    if (issue.code === 'invalid_type' && (issue as { input?: unknown }).input === undefined) {
      return { type: 'missing', loc, msg: 'Field required' };
    }
    if (issue.code === 'unrecognized_keys') {
      return { type: 'extra_forbidden', loc, msg: `Unknown field(s): ${issue.keys.join(', ')}` };
    }
    return { type: issue.code, loc, msg: issue.message };
  });
}

/** Parses `value` with `schema` or throws a ValidationError located under `where` (e.g. 'query' or ['body', 'payload']). */
export function validate<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path' | (string | number)[]): z.output<S> {
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) throw new ValidationError(issuesFromZod(result.error, typeof where === 'string' ? [where] : where));
  return result.data;
}
