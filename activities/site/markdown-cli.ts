/**
 * `npm run --silent markdown -- --level fit|raw [--url URL] [FILE]`: the compendium's page conversion
 * as a command. Reads one HTML document (FILE, or standard input) and prints its Markdown.
 *
 * `--jsonl`: a batch. Each line of standard input is `{"id", "url", "html"}`; each gives one line
 * `{"id", "markdown"}` on standard output, in input order. A line that cannot be read or converted
 * gives `{"id", "markdown": "", "error"}` and the batch goes on.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { htmlToMarkdown, type CleanupLevel } from './compendium';

const USAGE =
  'usage: npm run --silent markdown -- --level fit|raw [--url URL] [FILE]\n       npm run --silent markdown -- --level fit|raw --jsonl < pages.jsonl';

function fail(message: string): never {
  process.stderr.write(`markdown: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function readLevel(value: string | undefined): CleanupLevel {
  if (value === undefined || value === 'fit') return 'fit';
  if (value === 'raw') return 'raw';
  return fail(`--level must be fit or raw, not ${JSON.stringify(value)}`);
}

function readUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    return new URL(value).href;
  } catch {
    return fail(`--url is not a URL: ${JSON.stringify(value)}`);
  }
}

/** One batch line's answer. */
export function convertLine(line: string, level: CleanupLevel): Record<string, unknown> {
  let id: unknown = null;
  try {
    const input: unknown = JSON.parse(line);
    if (!input || typeof input !== 'object' || Array.isArray(input))
      throw new Error('a line must be a JSON object {"id", "url", "html"}');
    const { id: givenId, url, html } = input as Record<string, unknown>;
    id = givenId ?? null;
    if (typeof html !== 'string') throw new Error('"html" must be a string');
    if (url !== undefined && url !== null && typeof url !== 'string') throw new Error('"url" must be a string');
    let base: string | undefined;
    if (typeof url === 'string' && url !== '') {
      try {
        base = new URL(url).href;
      } catch {
        throw new Error(`"url" is not a URL: ${JSON.stringify(url.slice(0, 200))}`);
      }
    }
    return { id, markdown: htmlToMarkdown(html, level, base) };
  } catch (err) {
    return { id, markdown: '', error: err instanceof Error ? err.message : String(err) };
  }
}

async function main(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: {
        level: { type: 'string' },
        url: { type: 'string' },
        jsonl: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    fail(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const level = readLevel(values.level);
  if (values.jsonl) {
    if (positionals.length > 0 || values.url !== undefined)
      fail('--jsonl reads standard input; each line carries its own url');
    const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    for await (const line of lines) {
      if (line.trim() === '') continue;
      const out = `${JSON.stringify(convertLine(line, level))}\n`;
      // Waits for the reader: a batch of thousands of pages is not held in memory.
      if (!process.stdout.write(out)) await new Promise((resolve) => process.stdout.once('drain', resolve));
    }
    return;
  }
  if (positionals.length > 1) fail('one FILE at most');
  const url = readUrl(values.url);
  let html: string;
  try {
    html = readFileSync(positionals[0] ?? 0, 'utf8');
  } catch (err) {
    return fail(
      `cannot read ${positionals[0] ?? 'standard input'}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  process.stdout.write(`${htmlToMarkdown(html, level, url)}\n`);
}

void main();
