import type { Config } from '../config';
import { AppError } from '../errors';
import {
  listUnsubscribeHeaders as headersFor,
  signUnsubscribeToken,
  unsubscribeSigningKey,
  unsubscribeUrl,
} from '../unsubscribe';

/**
 * Everything mail does for unsubscribe preferences (spec §4.12), in one place: the signed
 * List-Unsubscribe / List-Unsubscribe-Post headers each copy carries (RFC 2369, RFC 8058 one-click)
 * and the 409 refusal of recipients who unsubscribed. The tokens, the pages and the preference
 * table belong to the unsubscribe feature (lib/unsubscribe.ts, db/repositories/unsubscribe.ts).
 */

/** The list a message without `list` is sent (and unsubscribed) under. */
export const DEFAULT_LIST = 'general';

export interface UnsubscribeClaimsInput {
  clientId: string;
  email: string;
  list: string | null;
}

/** Makes the signed one-click link of one recipient. */
export interface UnsubscribeLinks {
  urlFor(claims: { clientId: string; email: string; list: string }): string;
}

/** Who must not get mail of a list (db/repositories/unsubscribe.ts UnsubscribeRepository). */
export interface Suppressions {
  suppressed(clientId: string, emails: string[], list: string | null): Promise<string[]>;
}

/**
 * Signed links under PUBLIC_BASE_URL (else the API's own HOST:PORT), or undefined when
 * UNSUBSCRIBE_SIGNING_KEY is unset (development only: production requires it).
 */
export function unsubscribeLinks(
  config: Pick<Config, 'UNSUBSCRIBE_SIGNING_KEY' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>,
): UnsubscribeLinks | undefined {
  const key = unsubscribeSigningKey(config);
  if (!key) return undefined;
  const base = config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`;
  return { urlFor: (claims) => unsubscribeUrl(base, signUnsubscribeToken(key, claims)) };
}

/** The two headers of one recipient's copy; none when the service has no signing key. */
export function listUnsubscribeHeaders(
  links: UnsubscribeLinks | undefined,
  c: UnsubscribeClaimsInput,
): Record<string, string> {
  if (!links) return {};
  return headersFor(links.urlFor({ clientId: c.clientId, email: c.email, list: c.list ?? DEFAULT_LIST }));
}

/** Those of `recipients` who unsubscribed from the message's list (DEFAULT_LIST when it has none) or from everything. */
export async function unsubscribedOf(
  suppressions: Suppressions | undefined,
  clientId: string,
  recipients: string[],
  list: string | null,
): Promise<string[]> {
  return suppressions ? suppressions.suppressed(clientId, recipients, list ?? DEFAULT_LIST) : [];
}

/** 409 naming every recipient who unsubscribed from the message's list or from everything. */
export async function refuseUnsubscribed(
  suppressions: Suppressions | undefined,
  clientId: string,
  recipients: string[],
  list: string | null,
): Promise<void> {
  const refused = await unsubscribedOf(suppressions, clientId, recipients, list);
  if (refused.length > 0) {
    throw new AppError(
      409,
      `recipients unsubscribed from ${list ? `list "${list}"` : 'this mail'} (or from everything): ${refused.join(', ')}`,
      'unsubscribed',
    );
  }
}
