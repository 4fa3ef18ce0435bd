/**
 * Renders a JSON response as Markdown for `?format=md` (spec §1.2.5): scalars of an object as a
 * field/value table, arrays of objects as tables (one row per item), arrays of scalars as
 * bullet lists, nested objects as sub-sections.
 */
type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const isObject = (v: Json): v is { [k: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: Json) => v === null || typeof v !== 'object';

/**
 * Text from the data as it reads, never as markup: stored values come from crawled pages and inbound
 * mail, and a renderer would run their HTML (`<script>`, `<img onerror>`) or turn `[x](url)` into a
 * link. HTML-significant characters become entities and brackets are escaped; the table's own `|`
 * and line breaks (`<br>`, the one tag this renderer writes) keep a cell one cell.
 */
function text(raw: string): string {
  return raw
    .replace(/\\/g, '\\\\')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/([[\]|])/g, '\\$1')
    .replace(/\r?\n/g, '<br>');
}

function cell(v: Json): string {
  return text(v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
}

function table(headers: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}

function renderArray(items: Json[], depth: number): string {
  if (items.length === 0) return '_(none)_';
  if (items.every(isObject)) {
    const columns: string[] = [];
    for (const item of items) for (const k of Object.keys(item)) if (!columns.includes(k)) columns.push(k);
    return table(
      columns.map(text),
      items.map((item) => columns.map((c) => cell(item[c] ?? null))),
    );
  }
  if (items.every(isScalar)) return items.map((v) => `- ${cell(v)}`).join('\n');
  return items.map((v, i) => `${'#'.repeat(Math.min(depth, 6))} ${i + 1}\n\n${render(v, depth + 1)}`).join('\n\n');
}

function render(value: Json, depth: number): string {
  if (Array.isArray(value)) return renderArray(value, depth);
  if (!isObject(value)) return cell(value);
  const scalars = Object.entries(value).filter(([, v]) => isScalar(v));
  const nested = Object.entries(value).filter(([, v]) => !isScalar(v));
  const parts: string[] = [];
  if (scalars.length)
    parts.push(
      table(
        ['field', 'value'],
        scalars.map(([k, v]) => [cell(k), cell(v)]),
      ),
    );
  for (const [k, v] of nested) parts.push(`${'#'.repeat(Math.min(depth, 6))} ${text(k)}\n\n${render(v, depth + 1)}`);
  return parts.join('\n\n') || '_(empty)_';
}

export function toMarkdown(value: unknown, title?: string): string {
  const json = JSON.parse(JSON.stringify(value ?? null)) as Json;
  const body = render(json, title ? 2 : 1);
  return `${title ? `# ${title}\n\n` : ''}${body}\n`;
}
