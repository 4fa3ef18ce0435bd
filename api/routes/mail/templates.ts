import { notFound } from '../../../lib/errors';
import { placeholders } from '../../../lib/mail/templates';
import { clientIdOf } from '../../context';
import { templateView } from '../../presenters/mail';
import type { ApiRouter } from '../../routing';
import {
  templateCreateBody,
  templateIdParams,
  templateListQuery,
  templateListResponse,
  templatePatchBody,
  templateResponse,
} from '../../schemas/mail';
import { type MailLookups, type MailRouteDeps, MAIL_ROUTE, checkTemplateVariables } from './shared';

/** Templates with {{variable}} placeholders; DELETE is soft. */
export function templatesRoutes(api: ApiRouter, _deps: MailRouteDeps, l: MailLookups): void {
  const { repoOf, template } = l;
  api.add({
    ...MAIL_ROUTE,
    method: 'get',
    path: '/api/v1/mail/templates',
    operationId: 'listMailTemplates',
    summary: 'Active templates, optionally of one type',
    query: templateListQuery,
    responses: { 200: { description: 'Templates', schema: templateListResponse } },
    handler: async (ctx, { query }) => {
      const rows = await repoOf().listTemplates(clientIdOf(ctx), query.template_type, query.include_inactive ?? false);
      ctx.body = { success: true, templates: rows.map(templateView), total: rows.length };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'post',
    path: '/api/v1/mail/templates',
    operationId: 'createMailTemplate',
    summary: 'Create a template with {{variable}} placeholders',
    description:
      'The placeholders of html_source are extracted and checked against `variables` (422 naming any not listed, or listed but unused); without `variables` they are the placeholders.',
    body: templateCreateBody,
    responses: { 201: { description: 'Created', schema: templateResponse } },
    handler: async (ctx, { body }) => {
      const variables = body.variables ?? placeholders(body.html_source);
      checkTemplateVariables(body.html_source, variables, ['body', 'variables']);
      const row = await repoOf().createTemplate(clientIdOf(ctx), {
        name: body.name,
        description: body.description ?? null,
        template_type: body.template_type,
        html_source: body.html_source,
        variables,
      });
      ctx.status = 201;
      ctx.body = { success: true, template: templateView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'patch',
    path: '/api/v1/mail/templates/{template_id}',
    operationId: 'updateMailTemplate',
    summary: 'Change a template (only the fields given)',
    description:
      'A new html_source without `variables` takes its placeholders as the variables; given variables are checked against the (new or current) html_source.',
    params: templateIdParams,
    body: templatePatchBody,
    responses: {
      200: { description: 'The template', schema: templateResponse },
      404: { description: 'No such template for this client' },
    },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const current = await template(clientId, params.template_id);
      const patch = { ...body };
      if (body.html_source !== undefined || body.variables !== undefined) {
        const source = body.html_source ?? current.html_source;
        patch.variables = body.variables ?? (body.html_source !== undefined ? placeholders(source) : current.variables);
        checkTemplateVariables(source, patch.variables, ['body', 'variables']);
      }
      const row = await repoOf().updateTemplate(clientId, current.id, patch);
      if (!row) throw notFound('template not found');
      ctx.body = { success: true, template: templateView(row) };
    },
  });

  api.add({
    ...MAIL_ROUTE,
    method: 'delete',
    path: '/api/v1/mail/templates/{template_id}',
    operationId: 'deleteMailTemplate',
    summary: 'Soft-delete a template (is_active false)',
    params: templateIdParams,
    responses: { 204: { description: 'Deleted (inactive)' }, 404: { description: 'No such template for this client' } },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      await template(clientId, params.template_id);
      await repoOf().updateTemplate(clientId, params.template_id, { is_active: false });
      ctx.status = 204;
    },
  });
}
