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

/** Where `value` holds a string with a NUL character, which no Postgres text column can store. */
function nulCharacters(value: unknown, loc: (string | number)[], found: ValidationIssue[] = []): ValidationIssue[] {
  if (found.length >= 20) return found;
  if (typeof value === 'string') {
    if (value.includes('\u0000')) found.push({ type: 'string_nul', loc, msg: 'NUL characters (\\u0000) are not accepted' });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => nulCharacters(v, [...loc, i], found));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('\u0000')) found.push({ type: 'string_nul', loc: [...loc, k], msg: 'NUL characters (\\u0000) are not accepted' });
      nulCharacters(v, [...loc, k], found);
    }
  }
  return found;
}

/** Parses `value` with `schema` or throws a ValidationError located under `where` (e.g. 'query' or ['body', 'payload']). */
export function validate<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'path' | (string | number)[]): z.output<S> {
  const prefix = typeof where === 'string' ? [where] : where;
  const nul = nulCharacters(value, prefix);
  if (nul.length) throw new ValidationError(nul);
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) throw new ValidationError(issuesFromZod(result.error, prefix));
  return result.data;
}
