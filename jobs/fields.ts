import { z } from 'zod';
import { hasCredentials, isHttpUrl } from '../lib/urls';

export { hasCredentials, isHttpUrl };

/** Zod fields several job payloads share. */

// What String.prototype.trim removes and \s matches (ECMAScript WhiteSpace and LineTerminator), as
// the inside of a regular expression class for JSON Schema patterns (which Python's re and JavaScript
// both read) and for Postgres's regular expressions (the IDAP name key, db/repositories/resources.ts).
export const WHITESPACE_CLASS =
  '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const TRIMMED = `[${WHITESPACE_CLASS}]`;

/**
 * The JSON Schema pattern of a field read with `.trim()` first: `core` with any whitespace around it.
 * For the OpenAPI document, where a trimming schema's input side says only "string".
 */
export const trimmedPattern = (core: string) => `^${TRIMMED}*(?:${core})${TRIMMED}*$`;

/** The JSON Schema pattern of a string that is not blank once trimmed (a pattern matches anywhere in the string). */
export const NOT_BLANK_PATTERN = `[^${WHITESPACE_CLASS}]`;

/** A code matching `core` (a regular expression of ASCII letters), trimmed, checked, then upper-cased (which turns "ß" into "SS"). */
const asciiCode = <C extends string>(core: string, message: string) =>
  z
    .string()
    .trim()
    .regex(new RegExp(`^(?:${core})$`), message)
    .transform((v) => v.toUpperCase() as C)
    .meta({ pattern: trimmedPattern(core) });

/** An ISO 3166-1 alpha-2 code as the API reads it: trimmed, two ASCII letters of either case, upper-cased. */
export const countryCode = (message: string) => asciiCode<string>('[A-Za-z]{2}', message);

/** One of `codes` (upper-case ISO 3166-1 alpha-2), read as countryCode reads a code. */
export const countryIn = <C extends string>(codes: readonly C[], message: string) =>
  asciiCode<C>(codes.map((c) => [...c].map((ch) => `[${ch}${ch.toLowerCase()}]`).join('')).join('|'), message);

// zod's e-mail address pattern as its JSON Schema gives it (the same language as its check, without lookaheads).
const EMAIL_CORE = (z.toJSONSchema(z.email()) as { pattern: string }).pattern.replace(/^\^|\$$/g, '');

/** An e-mail address, trimmed (at most `max` characters after trimming), as zod's z.email() reads one. */
export const trimmedEmail = (max = 320) =>
  z
    .string()
    .trim()
    .max(max)
    .pipe(z.email())
    .meta({ format: 'email', pattern: trimmedPattern(EMAIL_CORE) });

/**
 * The JSON Schema pattern of what isHttpUrl may accept: an http: or https: scheme as the WHATWG URL
 * parser reads one (after leading C0 controls and spaces, any case, tabs and newlines inside
 * dropped), then slashes and the first character of a host. Every URL the API accepts matches it;
 * not every match is a URL (no pattern says what the parser does with the rest).
 */
const SKIPPED = '[\\t\\n\\r]*';
export const HTTP_URL_PATTERN = `^[\\u0000-\\u0020${WHITESPACE_CLASS}]*[Hh]${SKIPPED}[Tt]${SKIPPED}[Tt]${SKIPPED}[Pp]${SKIPPED}(?:[Ss]${SKIPPED})?:[\\t\\n\\r/\\\\]*[^\\t\\n\\r/\\\\?#]`;

/** An absolute http(s) URL with a host; the message names the field. */
export const httpUrl = (what: string) =>
  z
    .string()
    .trim()
    .min(1)
    .refine(isHttpUrl, `${what} must be a valid http(s) URL`)
    // `user:pass@host` hides the real host from a reader (http://bank.example@10.0.0.1/) and no page
    // of a lead's site needs it: refused at submission rather than failing in the worker.
    .refine((v) => !hasCredentials(v), `${what} must not contain credentials (user:password@ before the host)`)
    .meta({ pattern: HTTP_URL_PATTERN });

/** The sitemaps protocol's limit on a URL, and Google's: a crawl fetches no longer one (activities/site/crawler.ts). */
export const MAX_CRAWL_URL_LENGTH = 2048;

/** A website to crawl: an http(s) URL a crawl would follow. */
export const crawlUrl = (what: string) =>
  httpUrl(what).max(
    MAX_CRAWL_URL_LENGTH,
    `${what} must be at most ${MAX_CRAWL_URL_LENGTH} characters long (a crawl follows no longer URL)`,
  );

export const isoTime = z.string().describe('ISO 8601 timestamp');

/** The social profile links of a result, as top-level keys (spec §2.1: `data.proflink`, `data.microblog`, ...). */
export const socialKeys = {
  proflink: z.string().nullable().describe('LinkedIn'),
  microblog: z.string().nullable().describe('X / Twitter'),
  socialnet: z.string().nullable().describe('Facebook'),
  instagram: z.string().nullable(),
  youtube: z.string().nullable(),
  tiktok: z.string().nullable(),
  pinterest: z.string().nullable(),
  github: z.string().nullable(),
};

/** A result shape not documented yet: any object. */
export const anyResult = z.record(z.string(), z.unknown());
