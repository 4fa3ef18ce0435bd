import { getSchema } from '@tiptap/core';
import Image from '@tiptap/extension-image';
import StarterKit from '@tiptap/starter-kit';
import { createDocument } from '@mixmark-io/domino';
import { DOMSerializer, type Node as PmNode } from 'prosemirror-model';
import sanitizeHtml from 'sanitize-html';

/**
 * Post bodies (spec §2.11): rich-text JSON documents as the TipTap editor writes them, checked
 * against TipTap's own schema (StarterKit's nodes and marks, plus images) by ProseMirror, and
 * rendered to HTML that is then sanitised, for the public endpoints. Built once per process.
 *
 * Nodes: doc, paragraph, text, heading (levels 1-6), blockquote, bulletList, orderedList, listItem,
 * codeBlock, hardBreak, horizontalRule, image. Marks: bold, italic, strike, underline, code, link.
 */
export const documentSchema = getSchema([StarterKit, Image]);
const serializer = DOMSerializer.fromSchema(documentSchema);

/** Words a reader reads per minute, for `reading_time`. */
export const WORDS_PER_MINUTE = 200;

export class InvalidDocumentError extends Error {}

/**
 * Nodes and marks one post may hold. Checking and rendering cost about 30-60 us each on the API's
 * thread (a 1.8 MB document of 60,000 held it over a second); a book-length post has a few thousand.
 */
export const MAX_DOCUMENT_NODES = 20_000;

/** A ProseMirror node of the document schema, or InvalidDocumentError saying what is wrong. */
export function parseDocument(json: unknown): PmNode {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new InvalidDocumentError('must be a rich-text JSON document (an object with type "doc")');
  if ((json as { type?: unknown }).type !== 'doc') throw new InvalidDocumentError('the top node must have type "doc"');
  if (countNodes(json, MAX_DOCUMENT_NODES) > MAX_DOCUMENT_NODES) {
    throw new InvalidDocumentError(`the document has more than ${MAX_DOCUMENT_NODES} nodes and marks`);
  }
  let node: PmNode;
  try {
    node = documentSchema.nodeFromJSON(json);
    // fromJSON builds what it is given; check() enforces the content expressions and mark rules.
    node.check();
  } catch (err) {
    throw new InvalidDocumentError((err as Error).message);
  }
  // The schema checks structure, not attribute values: the document is stored and served as JSON
  // too, so what a site renders from it must be as safe as body_html.
  node.descendants((n) => {
    if (
      n.type.name === 'heading' &&
      !(Number.isInteger(n.attrs.level) && (n.attrs.level as number) >= 1 && (n.attrs.level as number) <= 6)
    ) {
      throw new InvalidDocumentError(
        `heading level must be an integer from 1 to 6, not ${JSON.stringify(n.attrs.level)}`,
      );
    }
    if (n.type.name === 'image') checkUrl('image src', n.attrs.src, IMAGE_SCHEMES);
    for (const mark of n.marks) if (mark.type.name === 'link') checkUrl('link href', mark.attrs.href, LINK_SCHEMES);
  });
  return node;
}

/** Nodes and marks of a document as JSON (before the schema reads it), counted no further than one past `max`. */
function countNodes(json: object, max: number): number {
  let count = 0;
  const stack: unknown[] = [json];
  while (stack.length > 0 && count <= max) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    count += 1;
    const { content, marks } = node as { content?: unknown; marks?: unknown };
    if (Array.isArray(marks)) count += marks.length;
    if (Array.isArray(content)) for (const child of content) stack.push(child);
  }
  return count;
}

const LINK_SCHEMES = new Set(['http:', 'https:', 'mailto:']);
const IMAGE_SCHEMES = new Set(['http:', 'https:']);

/**
 * A link or image URL over an allowed scheme, read as a browser reads it (the WHATWG parser drops
 * tabs and newlines, so "java\tscript:" is javascript:); a relative URL is allowed.
 */
function checkUrl(what: string, value: unknown, schemes: Set<string>): void {
  if (value === null || value === undefined) return;
  let scheme: string | undefined;
  try {
    scheme = typeof value === 'string' ? new URL(value, 'https://relative.invalid/').protocol : undefined;
  } catch {
    throw new InvalidDocumentError(`${what} is not a valid URL: ${JSON.stringify(value)}`);
  }
  if (!scheme || !schemes.has(scheme))
    throw new InvalidDocumentError(
      `${what} must be an ${[...schemes].map((x) => x.slice(0, -1)).join(', ')} or relative URL, not ${JSON.stringify(value)}`,
    );
}

/** The document's text, blocks separated by spaces (for reading time and summaries). */
export function documentText(doc: PmNode): string {
  return doc.textBetween(0, doc.content.size, ' ', ' ');
}

/** Whole minutes to read the document, at least 1. */
export function readingTime(doc: PmNode): number {
  const words = documentText(doc).split(/\s+/).filter(Boolean).length;
  return Math.max(1, Math.ceil(words / WORDS_PER_MINUTE));
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'p',
    'br',
    'hr',
    'blockquote',
    'ul',
    'ol',
    'li',
    'pre',
    'code',
    'strong',
    'em',
    's',
    'u',
    'a',
    'img',
  ],
  allowedAttributes: {
    a: ['href', 'rel', 'target'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    ol: ['start', 'type'],
    code: ['class'],
  },
  allowedClasses: { code: [/^language-[\w-]+$/] },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowProtocolRelative: false,
  // Links leave the site without handing it the reader's session or standing.
  transformTags: { a: sanitizeHtml.simpleTransform('a', { rel: 'noopener noreferrer nofollow' }) },
};

/** The document as sanitised HTML: only the schema's elements, links and images over http(s) (and mailto:). */
export function renderDocument(doc: PmNode): string {
  // A server-side DOM (domino) for ProseMirror's serializer: elements, text nodes, attributes.
  const document = createDocument('<!doctype html><html><body></body></html>');
  const fragment = serializer.serializeFragment(doc.content, {
    document: document as unknown as NonNullable<Parameters<typeof serializer.serializeFragment>[1]>['document'],
  });
  const container = document.createElement('div');
  container.appendChild(fragment);
  return sanitizeHtml(container.innerHTML, SANITIZE);
}
