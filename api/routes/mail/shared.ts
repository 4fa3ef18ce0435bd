import type { Middleware } from 'koa';
import type { MailRepository } from '../../../db/repositories/mail';
import { AppError, notFound, ValidationError } from '../../../lib/errors';
import type { Suppressions } from '../../../lib/mail/list-unsubscribe';
import { htmlToText, variableMismatch } from '../../../lib/mail/templates';
import { HtmlTooDeepError, MAX_HTML_DEPTH } from '../../../lib/dom-markdown';
import type { AllowList } from '../../../lib/outbound';
import type { AppState } from '../../context';
import type { MailWorkflows } from '../../mail-service';

export interface MailRouteDeps {
  /** Undefined when INTEGRATIONS_ENCRYPTION_KEY is not set (mailbox passwords cannot be sealed): every route answers 503 saying so. */
  repo: MailRepository | undefined;
  workflows: MailWorkflows;
  /** Unsubscribe preferences (lib/mail/list-unsubscribe.ts); undefined: no recipient is refused. */
  suppressions: Suppressions | undefined;
  /** USER_URL_ALLOW_HOSTS: mailbox hosts in private ranges that the login check may reach. */
  allowHosts: AllowList;
  timeoutMs: number;
  maxMessageBytes: number;
}

/** The path of raw import; app.ts keeps the JSON/YAML body parser off it. */
export const MAIL_IMPORT_PATH = /^\/api\/v1\/mail\/mailboxes\/[^/]+\/import\/?$/;

/** What every mail route shares in the OpenAPI document and its guards. */
export const MAIL_ROUTE = { tags: ['mail'], security: 'client' as const };

export const invalid = (loc: (string | number)[], msg: string) =>
  new ValidationError([{ type: 'value_error', loc, msg }]);

/** The text part made from an HTML-only body; HTML nested too deep to convert is a 422 on `html`. */
export function plainTextOf(html: string): string {
  try {
    return htmlToText(html);
  } catch (err) {
    if (err instanceof HtmlTooDeepError)
      throw invalid(
        ['body', 'html'],
        `elements nested more than ${MAX_HTML_DEPTH} deep; send a text part (text) or simpler HTML`,
      );
    throw err;
  }
}

/** 422 unless every placeholder of html_source is declared and every declared variable used. */
export function checkTemplateVariables(source: string, declared: string[], loc: string[]): void {
  const { undeclared, unused } = variableMismatch(source, declared);
  const issues = [
    ...(undeclared.length
      ? [{ type: 'value_error', loc, msg: `placeholders not listed in variables: ${undeclared.join(', ')}` }]
      : []),
    ...(unused.length
      ? [{ type: 'value_error', loc, msg: `variables not used in html_source: ${unused.join(', ')}` }]
      : []),
  ];
  if (issues.length) throw new ValidationError(issues);
}

/** Reads a message/rfc822 body as bytes (at most `limit`); any other content type is a 415. */
export function readRawMessage(limit: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (ctx.request.type !== 'message/rfc822') {
      throw new AppError(
        415,
        `unsupported content type '${ctx.request.type || 'none'}'; send one RFC 5322 message as message/rfc822`,
        'unsupported_media_type',
      );
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit)
        throw new AppError(413, `message is larger than ${limit} bytes (MAIL_MAX_MESSAGE_BYTES)`, 'payload_too_large');
      chunks.push(chunk);
    }
    if (size === 0) throw invalid(['body'], 'the body must be one RFC 5322 message');
    ctx.request.body = Buffer.concat(chunks) as unknown as typeof ctx.request.body;
    return next();
  };
}

/** The repository (503 when mail is not configured) and the client's rows by id, 404 when not theirs. */
export function mailLookups(deps: MailRouteDeps) {
  const repoOf = () => {
    if (!deps.repo)
      throw new AppError(
        503,
        'mail is not configured on this server (INTEGRATIONS_ENCRYPTION_KEY is unset: mailbox passwords cannot be encrypted)',
        'not_configured',
      );
    return deps.repo;
  };
  const mailbox = async (clientId: string, id: number) => {
    const found = await repoOf().findMailbox(clientId, id);
    if (!found) throw notFound('mailbox not found');
    return found;
  };
  const mailboxByAddress = async (clientId: string, address: string) => {
    const found = await repoOf().findMailboxByAddress(clientId, address);
    if (!found) throw notFound(`no mailbox with address ${address}`);
    return found;
  };
  const message = async (clientId: string, id: number) => {
    const found = await repoOf().findMessage(clientId, id);
    if (!found) throw notFound('message not found');
    return found;
  };
  const template = async (clientId: string, id: number) => {
    const found = await repoOf().findTemplate(clientId, id);
    if (!found) throw notFound('template not found');
    return found;
  };

  return { repoOf, mailbox, mailboxByAddress, message, template };
}

export type MailLookups = ReturnType<typeof mailLookups>;
