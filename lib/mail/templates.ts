import { parseDocument } from 'htmlparser2';
import { domToMarkdown } from '../dom-markdown';

/**
 * Mail templates (spec §2.13): `{{variable}}` placeholders in html_source. Pure helpers shared by
 * the API (create/patch checks, rendering a send) and tests.
 */

// A name of letters, digits, `_`, `.` or `-`, starting with a letter or `_`; spaces inside the braces are allowed.
const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}/g;

/** The placeholder names of a template, each once, in order of first use. */
export function placeholders(source: string): string[] {
  return [...new Set([...source.matchAll(PLACEHOLDER)].map((m) => m[1] as string))];
}

/** What is wrong between a template's placeholders and its declared variables (empty: nothing). */
export function variableMismatch(
  source: string,
  declared: readonly string[],
): { undeclared: string[]; unused: string[] } {
  const used = placeholders(source);
  return { undeclared: used.filter((v) => !declared.includes(v)), unused: declared.filter((v) => !used.includes(v)) };
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] as string);

/**
 * Fills every placeholder with its value (HTML-escaped when `html`). Returns the names that have
 * no value instead of a half-filled text, so that no message goes out with `{{first_name}}` in it.
 */
export function render(
  source: string,
  values: Record<string, string>,
  options: { html: boolean },
): { text: string; missing: string[] } {
  const missing = placeholders(source).filter((v) => !Object.hasOwn(values, v));
  if (missing.length > 0) return { text: source, missing };
  const text = source.replace(PLACEHOLDER, (_, name: string) => {
    const value = values[name] as string;
    return options.html ? escapeHtml(value) : value;
  });
  return { text, missing: [] };
}

/**
 * The plain-text part of a message whose sender gave only HTML: the HTML as Markdown-like text.
 * Throws HtmlTooDeepError (lib/dom-markdown.ts) for HTML nested beyond MAX_HTML_DEPTH.
 */
export function htmlToText(html: string): string {
  return domToMarkdown(parseDocument(html).children, {
    remove: ['script', 'style', 'noscript', 'template', 'head'],
  }).trim();
}
