import { z } from 'zod';
import { domainName } from '../../api/schemas/content';
import { crawlCompanyDataPayload } from '../../jobs/crawl-company-data';
import { countryCode, countryIn, HTTP_URL_PATTERN, httpUrl, trimmedEmail } from '../../jobs/fields';

// The patterns the OpenAPI document gives for fields that the API reads in code (trimmed, either case,
// parsed as a URL): Schemathesis and client generators take them at their word, so every value the
// API accepts must match (else a valid request looks invalid), and a match should be accepted.

/** The pattern the document gives the schema's input (as api/openapi.ts emits it). */
const documented = (schema: z.ZodType): RegExp =>
  new RegExp((z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { pattern: string }).pattern);

/** Strings of `alphabet`, from a fixed seed: the same cases on every run. */
function* strings(alphabet: string[], count: number, prefix = ''): Generator<string> {
  let seed = 20261127;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < count; i++) {
    let v = next() < 0.5 ? prefix : '';
    for (let n = 1 + Math.floor(next() * 10); n > 0; n--) v += alphabet[Math.floor(next() * alphabet.length)];
    yield v;
  }
}

/** Of 100,000 seeded strings, how many `schema` accepts, and those of them `pattern` does not match. */
function acceptedUnmatched(
  schema: z.ZodType,
  pattern: RegExp,
  alphabet: string[],
  prefix: string,
): { accepted: number; unmatched: string[] } {
  let accepted = 0;
  const unmatched: string[] = [];
  for (const v of strings(alphabet, 100_000, prefix)) {
    if (!schema.safeParse(v).success) continue;
    accepted += 1;
    if (!pattern.test(v)) unmatched.push(v);
  }
  return { accepted, unmatched };
}

test('every URL the API accepts matches the documented http(s) pattern', () => {
  const url = httpUrl('url');
  const pattern = new RegExp(HTTP_URL_PATTERN);
  const alphabet = [
    'h',
    'H',
    't',
    'T',
    'p',
    'P',
    's',
    ':',
    '/',
    '\\',
    'a',
    '.',
    '\t',
    '\n',
    ' ',
    '\u0001',
    '\u00a0',
    '@',
    '1',
    '?',
    '#',
    '[',
    ']',
    '%',
  ];
  const { accepted, unmatched } = acceptedUnmatched(url, pattern, alphabet, 'http:');
  expect(accepted).toBeGreaterThan(1000);
  expect(unmatched).toEqual([]);
  // What the pattern refuses, the API refuses too.
  for (const v of ['HTTP:', 'http://', 'http://?q', 'ftp://a.example', 'a.example'])
    expect([v, pattern.test(v), url.safeParse(v).success]).toEqual([v, false, false]);
  for (const v of [' HTTPS://a.example ', 'http:a.example', 'http:\\\\a.example', '\u0001http://a.example'])
    expect([v, pattern.test(v), url.safeParse(v).success]).toEqual([v, true, true]);
});

test('country codes: two ASCII letters, trimmed, either case; checked before upper-casing ("ß" is not "SS")', () => {
  const code = countryCode('bad');
  const pattern = documented(code);
  for (const [v, ok] of [
    ['CH', true],
    [' ch\u00a0', true],
    ['ß', false],
    ['ıs', false],
    ['C', false],
    ['CHE', false],
  ] as const) {
    expect([v, pattern.test(v), code.safeParse(v).success]).toEqual([v, ok, ok]);
  }
  expect(code.parse(' ch ')).toBe('CH');
  const registry = countryIn(['US', 'GB'], 'bad');
  for (const [v, ok] of [
    ['us', true],
    [' Gb ', true],
    ['uſ', false],
    ['DE', false],
  ] as const) {
    expect([v, documented(registry).test(v), registry.safeParse(v).success]).toEqual([v, ok, ok]);
  }
});

test('VAT numbers: separators anywhere, either case, checked before upper-casing', () => {
  const pattern = new RegExp(
    (
      z.toJSONSchema(crawlCompanyDataPayload, { io: 'input', unrepresentable: 'any' }) as unknown as {
        properties: { vat_number: { pattern: string } };
      }
    ).properties.vat_number.pattern,
  );
  for (const [v, ok] of [
    ['DE282741168', true],
    [' de 282.741-168 ', true],
    ['ßs123', false],
    ['D', false],
    ['DE1', false],
  ] as const) {
    expect([v, pattern.test(v), crawlCompanyDataPayload.safeParse({ mode: 'vat', vat_number: v }).success]).toEqual([
      v,
      ok,
      ok,
    ]);
  }
  expect(crawlCompanyDataPayload.parse({ mode: 'vat', vat_number: 'de 282.741-168' }).vat_number).toBe('DE282741168');
});

test('e-mail addresses: the documented pattern and the check agree, whitespace around allowed', () => {
  const email = trimmedEmail();
  const pattern = documented(email);
  for (const [v, ok] of [
    ['a@b.co', true],
    [' A.b@c.de\t', true],
    ['a..b@c.de', false],
    ['.a@b.co', false],
    ['a@b', false],
    ['', false],
  ] as const) {
    expect([v, pattern.test(v), email.safeParse(v).success]).toEqual([v, ok, ok]);
  }
});

test('every domain name a content site accepts (and X-Content-Domain) matches the documented pattern', () => {
  const pattern = documented(domainName);
  const alphabet = [
    'a',
    'B',
    'x',
    'X',
    'n',
    'N',
    '-',
    '.',
    ':',
    '8',
    '0',
    ' ',
    '_',
    'ü',
    '\u00a0',
    '\t',
    'Ç',
    '𝕏',
    'l',
    'o',
    'c',
    '9',
  ];
  const { accepted, unmatched } = acceptedUnmatched(domainName, pattern, alphabet, 'a.');
  expect(accepted).toBeGreaterThan(500);
  expect(unmatched).toEqual([]);
  for (const [v, ok] of [
    ['Blog.Example.COM.', true],
    ['localhost:3000', true],
    ['a.xn--p1ai', true],
    ['bücher.de:8080', true],
    ['0', false],
    ['a..co', false],
    ['a.c0m', false],
    ['a_b.co', false],
  ] as const) {
    expect([v, pattern.test(v), domainName.safeParse(v).success]).toEqual([v, ok, ok]);
  }
});
