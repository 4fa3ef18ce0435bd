import { z } from 'zod';
import type { ContentRepository, PostInput } from '../../../db/repositories/content';
import { AppError, ValidationError } from '../../../lib/errors';
import { InvalidDocumentError, parseDocument, readingTime, renderDocument } from '../../../lib/rich-text';
import type { AppContext } from '../../context';
import { contentDomainHeaders, postPatchBody } from '../../schemas/content';
import { validate } from '../../validation';

// What the content routes share: the request-body rules of posts, the route presets and the public site's client.

/** The body checked against the document schema (400 naming the problem), rendered and timed. */
export function postDocument(body: Record<string, unknown>): NonNullable<PostInput['document']> {
  try {
    const doc = parseDocument(body);
    // Stored as the schema reads it: attributes the editor's schema does not have are not kept.
    return { body: doc.toJSON() as Record<string, unknown>, html: renderDocument(doc), readingTime: readingTime(doc) };
  } catch (err) {
    if (err instanceof InvalidDocumentError)
      throw new AppError(400, `body: invalid rich-text document: ${err.message}`, 'bad_request');
    throw err;
  }
}

/**
 * Spec §4.11: a missing or malformed field of a new post is a 400 whose detail names each problem.
 * A field is missing when the request has no such key; a value of the wrong type is named with the
 * type it has.
 */
export function parse400<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  // With each issue's input, as validate() asks for it: none means the key is absent.
  const result = schema.safeParse(value ?? {}, { reportInput: true });
  if (result.success) return result.data;
  const problems = result.error.issues.map((i) => {
    // The post has a field called `body`, so a problem with the whole document says "request body".
    const at = i.path.join('.') || 'request body';
    if (i.code === 'unrecognized_keys') return `unknown field(s): ${i.keys.join(', ')}`;
    if (i.code === 'invalid_type') {
      if (i.input === undefined) return `${at}: field required`;
      // A rich-text document is a z.record, which the caller knows as an object.
      return `${at}: expected ${i.expected === 'record' ? 'object' : i.expected}, received ${jsonType(i.input)}`;
    }
    return `${at}: ${i.message}`;
  });
  throw new AppError(400, problems.join('; '), 'bad_request');
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export const toPostInput = (b: z.output<typeof postPatchBody>): PostInput => {
  const { body, ...rest } = b;
  return { ...rest, ...(body === undefined ? {} : { document: postDocument(body) }) };
};

export interface ContentDeps {
  repo: ContentRepository;
  /** Resolvers for the sites' DNS proof (DNS_SERVERS; empty: the system's). */
  dnsServers: readonly string[];
}

/** The dashboard's routes: the client's own content, with its API key. */
export const dash = { tags: ['content'], security: 'client' as const };
/** The public routes: no key; X-Content-Domain names a verified site, which names the client. */
export const pub = { tags: ['content'], security: 'none' as const, headers: contentDomainHeaders };

/**
 * The client of X-Content-Domain. A header that is missing, malformed or names no verified site
 * is a 422 on the header: spec §4.11 gives the public author list 200 and 422 only, and the
 * public post routes answer the same.
 */
export const siteClientOf =
  (repo: ContentRepository) =>
  async (ctx: AppContext): Promise<string> => {
    const headers = validate(contentDomainHeaders, { 'x-content-domain': ctx.get('x-content-domain') || undefined }, [
      'header',
    ]);
    const domain = headers['x-content-domain'];
    const clientId = await repo.clientOfDomain(domain);
    if (!clientId)
      throw new ValidationError([
        {
          type: 'site_not_found',
          loc: ['header', 'x-content-domain'],
          msg: `no verified site is registered for the domain '${domain}'`,
        },
      ]);
    return clientId;
  };
