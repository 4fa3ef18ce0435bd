import { Parser } from 'htmlparser2';
import { simpleParser, type AddressObject } from 'mailparser';
import { HTML_BLOCKS } from '../html-blocks';
import { messageIdsIn, normalizeMessageId, syntheticMessageId } from './message-id';

/** One RFC 5322 message as the mail tables store it (spec §2.13). */
export interface ParsedMessage {
  message_id: string;
  in_reply_to: string | null;
  references: string[];
  from_address: string;
  to_addresses: string[];
  cc_addresses: string[] | null;
  subject: string;
  body_text: string;
  body_html: string | null;
  date: Date;
}

export class UnparseableMessageError extends Error {}

// Postgres text (and jsonb) refuses U+0000, which an encoded-word or a quoted-printable `=00` decodes
// to; a mail client shows such a character as U+FFFD, and the message is kept instead of failing its insert.
const noNul = (text: string): string => text.replaceAll('\u0000', '\uFFFD');

const addresses = (field: AddressObject | AddressObject[] | undefined): string[] =>
  (Array.isArray(field) ? field : field ? [field] : [])
    .flatMap((o) => o.value)
    .flatMap((a) => (a.group ? a.group : [a]))
    .map((a) => a.address?.toLowerCase())
    .filter((a): a is string => Boolean(a))
    .map(noNul);

/**
 * Parses a raw message (mailparser). A message without a Message-ID gets a synthetic one derived
 * from its bytes, so that importing or syncing it twice still finds the first copy. A message with
 * neither a From nor any header at all is not a message: UnparseableMessageError.
 */
export async function parseRawMessage(raw: Buffer, receivedAt = new Date()): Promise<ParsedMessage> {
  // mailparser's own text for an HTML-only message (html-to-text) grows worse than quadratically
  // with a table's rows: 6 MiB took 55 s and 1 GB of one thread. The text part is made here instead.
  const mail = await simpleParser(raw, {
    skipImageLinks: true,
    skipTextLinks: true,
    skipHtmlToText: true,
    skipTextToHtml: true,
  });
  const from = addresses(mail.from)[0];
  if (mail.headerLines.length === 0 || (!from && !mail.messageId))
    throw new UnparseableMessageError('not an RFC 5322 message: no headers, or neither From nor Message-ID');
  const inReplyTo = messageIdsIn(mail.inReplyTo)[0] ?? null;
  const cc = addresses(mail.cc);
  return {
    message_id: noNul(mail.messageId ? normalizeMessageId(mail.messageId) : syntheticMessageId(raw)),
    in_reply_to: inReplyTo === null ? null : noNul(inReplyTo),
    references: messageIdsIn(mail.references).map(noNul),
    from_address: from ?? '',
    to_addresses: addresses(mail.to),
    cc_addresses: cc.length > 0 ? cc : null,
    subject: noNul(mail.subject ?? ''),
    // The line break that ends every body is transport, not text.
    body_text: noNul((mail.text || (typeof mail.html === 'string' ? htmlText(mail.html) : '')).trimEnd()),
    body_html: typeof mail.html === 'string' ? noNul(mail.html) : null,
    date: mail.date && !Number.isNaN(mail.date.getTime()) ? mail.date : receivedAt,
  };
}

// Elements that start a line of their own in the text of an HTML-only message.
const BLOCKS = new Set([...HTML_BLOCKS, 'br']);
const HIDDEN = new Set(['script', 'style', 'head', 'title', 'template', 'noscript']);

/**
 * The text of an HTML body, a line per block element, in one streaming pass (htmlparser2's
 * tokenizer: no DOM, no recursion, linear in the HTML). Only its words matter here: the HTML is kept
 * as the message's html body.
 */
export function htmlText(html: string): string {
  const lines: string[] = [];
  let line = '';
  let hidden = 0;
  const endLine = () => {
    const text = line.replace(/[^\S\n]+/g, ' ').trim();
    if (text !== '') lines.push(text);
    line = '';
  };
  const parser = new Parser(
    {
      onopentagname(name) {
        if (HIDDEN.has(name)) hidden += 1;
        else if (BLOCKS.has(name)) endLine();
      },
      onclosetag(name) {
        if (HIDDEN.has(name)) hidden = Math.max(0, hidden - 1);
        else if (BLOCKS.has(name)) endLine();
      },
      ontext(text) {
        if (hidden === 0) line += ` ${text}`;
      },
    },
    { decodeEntities: true },
  );
  parser.write(html);
  parser.end();
  endLine();
  return lines.join('\n');
}
