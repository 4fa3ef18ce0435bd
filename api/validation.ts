import type { z, ZodError } from 'zod';
import { ValidationError, type ValidationIssue } from '../lib/errors';

/** zod issues -> the spec's 422 items {type, loc, msg}; loc starts with body/query/path. */
export function issuesFromZod(err: ZodError, prefix: (string | number)[]): ValidationIssue[] {
  // A value of the wrong type is that one issue: zod also runs the size checks of the type it expected
  // on it (an array's max(8) on a string says "expected string to have <=8 characters").
  const wrongType = new Set(
    err.issues.filter((i) => i.code === 'invalid_type').map((i) => JSON.stringify(i.path.map(String))),
  );
  const issues = err.issues.filter(
    (i) =>
      i.code === 'invalid_type' ||
      !((i.code === 'too_big' || i.code === 'too_small') && wrongType.has(JSON.stringify(i.path.map(String)))),
  );
  return issues.map((issue) => {
    const loc = [...prefix, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
    // validate() asks zod for each issue's input: none means the key is absent (a missing enum
    // such as a job's `type` is an invalid_value, a missing string an invalid_type).
    if (
      (issue.code === 'invalid_type' || issue.code === 'invalid_value') &&
      'input' in issue &&
      issue.input === undefined
    ) {
      return { type: 'missing', loc, msg: 'Field required' };
    }
    if (issue.code === 'unrecognized_keys') {
      return { type: 'extra_forbidden', loc, msg: `Unknown field(s): ${issue.keys.join(', ')}` };
    }
    return { type: issue.code, loc, msg: issue.message };
  });
}

/** A UTF-16 surrogate without its pair: JSON and YAML escapes (`\ud800`) can write one, UTF-8 cannot. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** What is wrong with a string no Postgres text or jsonb value can hold as given, if anything. */
function unstorable(text: string): Omit<ValidationIssue, 'loc'> | undefined {
  if (text.includes('\u0000')) return { type: 'string_nul', msg: 'NUL characters (\\u0000) are not accepted' };
  // Postgres refuses it in jsonb (a 500 on submit) and the driver turns it into U+FFFD in text (a changed name).
  if (LONE_SURROGATE.test(text))
    return {
      type: 'string_unicode',
      msg: 'lone UTF-16 surrogates (\\ud800-\\udfff without their pair) are not accepted',
    };
  return undefined;
}

/** Where `value` holds a string (or a key) that cannot be stored as it is: a NUL character or a lone surrogate. */
function unstorableStrings(value: unknown, loc: (string | number)[], found: ValidationIssue[] = []): ValidationIssue[] {
  if (found.length >= 20) return found;
  if (typeof value === 'string') {
    const bad = unstorable(value);
    if (bad) found.push({ ...bad, loc });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => unstorableStrings(v, [...loc, i], found));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const bad = unstorable(k);
      if (bad) found.push({ ...bad, loc: [...loc, k] });
      unstorableStrings(v, [...loc, k], found);
    }
  }
  return found;
}

/** Parses `value` with `schema` or throws a ValidationError located under `where` (e.g. 'query' or ['body', 'payload']). */
export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'path' | (string | number)[],
): z.output<S> {
  const prefix = typeof where === 'string' ? [where] : where;
  const unfit = unstorableStrings(value, prefix);
  if (unfit.length) throw new ValidationError(unfit);
  const result = schema.safeParse(value, { reportInput: true });
  if (!result.success) throw new ValidationError(issuesFromZod(result.error, prefix));
  return result.data;
}
