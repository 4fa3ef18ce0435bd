import type { IntegrationRepository, IntegrationState, UsageRecord } from '../../db/repositories/integrations';
import { AppError, notFound } from '../../lib/errors';
import { callLlm, LlmError, type LlmUsage } from '../../lib/llm/call';
import { costUsd, priceOf, type Price } from '../../lib/llm/prices';
import {
  checkCredentials,
  isProviderName,
  PROVIDER_NAMES,
  PROVIDERS,
  type Credentials,
  type ProviderName,
} from '../../lib/llm/providers';
import type { OutboundClient } from '../../lib/outbound';
import { clientIdOf } from '../context';
import type { ApiRouter } from '../routing';
import {
  integrationCreateBody,
  integrationCreateDoc,
  integrationDeletedResponse,
  integrationIdParams,
  integrationListResponse,
  integrationPatchBody,
  integrationResponse,
  integrationTestResponse,
} from '../schemas/integrations';
import { iso } from '../../lib/dates';

export interface IntegrationRouteDeps {
  /** Undefined when INTEGRATIONS_ENCRYPTION_KEY is not set: every route answers 503 saying so. */
  repo: IntegrationRepository | undefined;
  /** The SSRF-guarded client of the live check (base URLs are the client's). */
  http: OutboundClient;
  breaker: { failures: number; cooldownSeconds: number };
  timeoutMs: number;
  prices: Record<string, Price>;
}

const num = (v: string | number | null) => (v === null ? null : Number(v));

/** Spec §2.12: the integration as clients see it (never the credentials, only key_preview). */
export function integrationView(r: IntegrationState) {
  return {
    id: r.id,
    provider_name: r.provider_name,
    provider_label: PROVIDERS[r.provider_name].label,
    key_label: r.key_label,
    model: r.model,
    is_active: r.is_active,
    is_primary: r.is_primary,
    priority: r.priority,
    daily_limit: r.daily_limit,
    daily_count: r.daily_count_now,
    minute_limit: r.minute_limit,
    minute_count: r.minute_count_now,
    health_status: r.health_status,
    consecutive_failures: r.consecutive_failures,
    retry_at: r.health_status === 'unhealthy' ? iso(r.retry_at) : null,
    last_error: r.last_error,
    last_used_at: iso(r.last_used_at),
    spend_limit_amount: num(r.spend_limit_amount),
    spend_limit_period: r.spend_limit_period,
    spend_limit_action: r.spend_limit_action,
    // From the current period's spend (the repository's one definition, which the selection obeys too).
    spend_limit_exceeded: r.spend_limit_exceeded_now,
    spend_current_period: Number(r.spend_current_period),
    prices:
      r.price_input === null || r.price_output === null
        ? null
        : { input: Number(r.price_input), output: Number(r.price_output) },
    key_preview: r.key_preview,
    created_at: new Date(r.created_at).toISOString(),
  };
}

/** A 400 in the `{success:false, error}` shape whose `error` names what is wrong (spec §4.9). */
const invalid = (message: string) => new AppError(400, message, message);

function provider(raw: unknown): ProviderName {
  if (raw === undefined) throw invalid('provider_name is required');
  if (!isProviderName(raw))
    throw invalid(`provider_name ${JSON.stringify(raw)} is not supported; one of: ${PROVIDER_NAMES.join(', ')}`);
  return raw;
}

function credentials(p: ProviderName, raw: unknown): Credentials {
  if (raw === undefined) throw invalid('credentials is required');
  const checked = checkCredentials(p, raw);
  if (!checked.ok) throw invalid(checked.error);
  return checked.credentials;
}

// The live check's question: tiny, so that it costs next to nothing.
const PROBE_SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
  required: ['ok'],
  additionalProperties: false,
};

export function integrationRoutes(api: ApiRouter, deps: IntegrationRouteDeps): void {
  const repoOf = () => {
    if (!deps.repo)
      throw new AppError(
        503,
        'LLM integrations are not configured on this server (INTEGRATIONS_ENCRYPTION_KEY is unset)',
        'not_configured',
      );
    return deps.repo;
  };
  // Another client's integration and a malformed id are the same answer: no such integration.
  const own = async (clientId: string, id: string) => {
    const n = /^\d{1,9}$/.test(id) ? Number(id) : NaN;
    const found = Number.isNaN(n) ? undefined : await repoOf().find(clientId, n);
    if (!found) throw notFound('integration not found');
    return found;
  };
  const common = { tags: ['integrations'], security: 'client' as const, errorShape: 'success' as const };

  api.add({
    ...common,
    method: 'post',
    path: '/api/v1/integrations',
    operationId: 'createIntegration',
    summary: 'Store an LLM provider key',
    description:
      'The credentials are encrypted at rest (AES-256-GCM) and never shown again: responses carry only `key_preview`. ' +
      'The same credential twice for a provider is a 409. The key is not called here: `POST /api/v1/integrations/{id}/test` does a live check.',
    body: integrationCreateBody,
    bodyDoc: integrationCreateDoc,
    responses: {
      201: { description: 'Stored', schema: integrationResponse },
      400: { description: 'Unknown provider, or credentials missing a field the provider needs' },
      409: { description: 'The same credential already exists for this provider' },
    },
    handler: async (ctx, { body }) => {
      const p = provider(body.provider_name);
      const creds = credentials(p, body.credentials);
      const { provider_name: _p, credentials: _c, ...settings } = body;
      const row = await repoOf().create(clientIdOf(ctx), p, creds, settings);
      ctx.status = 201;
      ctx.body = { success: true, integration: integrationView(row) };
    },
  });

  api.add({
    ...common,
    method: 'get',
    path: '/api/v1/integrations',
    operationId: 'listIntegrations',
    summary: "The client's LLM integrations, in selection order",
    description: 'Primary first, then priority (higher first), then oldest first: the order calls try them in.',
    responses: { 200: { description: 'Every integration of the client', schema: integrationListResponse } },
    handler: async (ctx) => {
      const rows = await repoOf().list(clientIdOf(ctx));
      ctx.body = { success: true, integrations: rows.map(integrationView), total: rows.length };
    },
  });

  api.add({
    ...common,
    method: 'get',
    path: '/api/v1/integrations/{integration_id}',
    operationId: 'getIntegration',
    summary: 'One LLM integration',
    params: integrationIdParams,
    responses: {
      200: { description: 'The integration', schema: integrationResponse },
      404: { description: 'No such integration for this client' },
    },
    handler: async (ctx, { params }) => {
      ctx.body = { success: true, integration: integrationView(await own(clientIdOf(ctx), params.integration_id)) };
    },
  });

  api.add({
    ...common,
    method: 'patch',
    path: '/api/v1/integrations/{integration_id}',
    operationId: 'updateIntegration',
    summary: "Change an integration's settings or credentials",
    description:
      "New credentials replace the old ones (same provider) and reset the key's health. Changing the spend limit re-checks it at the next call.",
    params: integrationIdParams,
    body: integrationPatchBody,
    responses: {
      200: { description: 'The updated integration', schema: integrationResponse },
      400: { description: 'Credentials missing a field the provider needs' },
      404: { description: 'No such integration for this client' },
      409: { description: 'The new credential already exists for this provider' },
    },
    handler: async (ctx, { params, body }) => {
      const clientId = clientIdOf(ctx);
      const current = await own(clientId, params.integration_id);
      const { credentials: raw, ...settings } = body;
      const creds = raw === undefined ? undefined : credentials(current.provider_name, raw);
      const row = await repoOf().update(clientId, current.id, settings, creds);
      if (!row) throw notFound('integration not found');
      ctx.body = { success: true, integration: integrationView(row) };
    },
  });

  api.add({
    ...common,
    method: 'delete',
    path: '/api/v1/integrations/{integration_id}',
    operationId: 'deleteIntegration',
    summary: 'Delete an integration and its usage log',
    params: integrationIdParams,
    responses: {
      200: { description: 'Deleted', schema: integrationDeletedResponse },
      404: { description: 'No such integration for this client' },
    },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      const current = await own(clientId, params.integration_id);
      if (!(await repoOf().delete(clientId, current.id))) throw notFound('integration not found');
      ctx.body = { success: true, deleted: current.id };
    },
  });

  api.add({
    ...common,
    method: 'post',
    path: '/api/v1/integrations/{integration_id}/test',
    operationId: 'testIntegration',
    summary: 'Live check: one tiny JSON-schema call to the provider',
    description:
      'Calls the provider with the stored key (through the SSRF guard) and reports whether it answered. A success makes the key healthy; ' +
      'a failure other than a 429 counts towards its circuit breaker. The tokens the answer reports are recorded as usage (and count towards the spend limit) ' +
      'even when the answer is not the JSON asked for. Request and spend limits do not stop the check.',
    params: integrationIdParams,
    responses: {
      200: { description: "The check's outcome and the integration after it", schema: integrationTestResponse },
      404: { description: 'No such integration for this client' },
    },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      const repo = repoOf();
      const row = await own(clientId, params.integration_id);
      const usageRecord = (u: LlmUsage): UsageRecord => ({
        purpose: 'integration_test',
        model: row.model,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        costUsd: costUsd(priceOf(row.model, deps.prices, repo.ownPrice(row)), u.inputTokens, u.outputTokens),
      });
      const started = Date.now();
      let test: {
        ok: boolean;
        model: string;
        latency_ms: number;
        input_tokens: number | null;
        output_tokens: number | null;
        error: string | null;
      };
      try {
        const answer = await callLlm(deps.http, {
          provider: row.provider_name,
          credentials: repo.credentials(row),
          instructions: 'You are a health check. Answer with the JSON object {"ok": true}.',
          input: 'Are you there?',
          jsonSchema: PROBE_SCHEMA,
          timeoutMs: deps.timeoutMs,
          maxOutputTokens: 20,
        });
        await repo.recordSuccess(row, usageRecord(answer));
        test = {
          ok: true,
          model: answer.model,
          latency_ms: Date.now() - started,
          input_tokens: answer.inputTokens,
          output_tokens: answer.outputTokens,
          error: null,
        };
      } catch (err) {
        const e =
          err instanceof LlmError ? err : new LlmError('unavailable', err instanceof Error ? err.message : String(err));
        // An answer that is not the JSON asked for was billed all the same.
        if (e.usage) await repo.recordUsage(row, usageRecord(e.usage));
        if (e.kind === 'rate_limited') await repo.recordRateLimited(row.id, e.retryAfterSeconds ?? 60, e.message);
        else await repo.recordFailure(row.id, e.message, deps.breaker.failures, deps.breaker.cooldownSeconds);
        test = {
          ok: false,
          model: e.usage?.model ?? row.model,
          latency_ms: Date.now() - started,
          input_tokens: e.usage?.inputTokens ?? null,
          output_tokens: e.usage?.outputTokens ?? null,
          error: e.message,
        };
      }
      const after = await own(clientId, params.integration_id);
      ctx.body = { success: true, test, integration: integrationView(after) };
    },
  });
}
