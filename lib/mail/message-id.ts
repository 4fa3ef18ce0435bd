import { createHash, randomUUID } from 'node:crypto';

/**
 * Message-IDs as the mail headers write them: `<left@right>`. Stored with the angle brackets, so
 * that References / In-Reply-To values (which carry them) compare equal.
 */
export function normalizeMessageId(raw: string): string {
  const id = raw.trim();
  return id.startsWith('<') && id.endsWith('>') ? id : `<${id.replace(/^<|>$/g, '')}>`;
}

/** A new Message-ID under the sending mailbox's domain. */
export function newMessageId(fromAddress: string): string {
  const domain = fromAddress.split('@')[1] ?? 'localhost';
  return `<${randomUUID()}@${domain.toLowerCase()}>`;
}

/** A stable Message-ID for a message that has none: the same raw message always gets the same one (idempotent import). */
export function syntheticMessageId(raw: Buffer): string {
  return `<${createHash('sha256').update(raw).digest('hex').slice(0, 40)}@no-message-id.invalid>`;
}

/** Every Message-ID in a References / In-Reply-To header value, in order. */
export function messageIdsIn(value: string | string[] | undefined | null): string[] {
  if (!value) return [];
  const text = Array.isArray(value) ? value.join(' ') : value;
  const found = text.match(/<[^<>\s]+>/g);
  if (found) return found;
  return text.split(/\s+/).filter(Boolean).map(normalizeMessageId);
}

/**
 * The thread a message belongs to (spec §4.10: the thread id is the first Message-ID). A known
 * ancestor's thread wins; else the first of References (the root, RFC 5322 §3.6.4), else
 * In-Reply-To, else the message starts a thread of its own.
 */
export function threadIdOf(
  message: { messageId: string; inReplyTo: string | null; references: string[] },
  knownThreadOf: (id: string) => string | undefined,
): string {
  const ancestors = [...message.references, ...(message.inReplyTo ? [message.inReplyTo] : [])];
  for (const id of ancestors) {
    const known = knownThreadOf(id);
    if (known) return known;
  }
  return ancestors[0] ?? message.messageId;
}
