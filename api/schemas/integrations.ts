import { z } from 'zod';
import { PROVIDER_NAMES } from '../../lib/llm/providers';

// ---- requests -------------------------------------------------------------------------------

const prices = z
  .strictObject({ input: z.number().min(0).max(10000), output: z.number().min(0).max(10000) })
  .nullable()
  .describe('USD per million tokens for this key (over LLM_PRICES and the built-in table); null: the table\'s');

const settings = {
  key_label: z.string().trim().min(1).max(200).nullable().optional(),
  is_primary: z.boolean().optional().describe('primary keys are selected first (default false)'),
  priority: z.number().int().min(0).max(1000).optional().describe('higher first, after primary; default 10 for primary keys, 0 for others'),
  daily_limit: z.number().int().min(1).nullable().optional().describe('requests per UTC day, counted by all workers together'),
  minute_limit: z.number().int().min(1).nullable().optional().describe('requests per minute, counted by all workers together'),
  spend_limit_amount: z.number().min(0).max(1e9).nullable().optional().describe('USD per period'),
  spend_limit_period: z.enum(['daily', 'monthly']).optional().describe('default monthly'),
  spend_limit_action: z.enum(['warn', 'block']).optional().describe('warn: flag and event integration.spend_limit_exceeded; block: the key is skipped until the period ends (default warn)'),
  prices: prices.optional(),
};

// provider_name and credentials are checked by the handler, so that a bad one is the 400 of spec §4.9 (not a 422).
export const integrationCreateBody = z.strictObject({
  provider_name: z.unknown().optional().describe(`one of ${PROVIDER_NAMES.join(', ')}`),
  credentials: z.unknown().optional().describe('api_key; azure_openai also endpoint and deployment; cloudflare_workers_ai also account_id; ollama base_url (no key); openai_compatible base_url and model. Optional: base_url (with the version prefix), model'),
  ...settings,
});

export const integrationCreateDoc = z.strictObject({
  provider_name: z.enum(PROVIDER_NAMES),
  credentials: z.record(z.string(), z.string()),
  ...settings,
});

export const integrationPatchBody = z.strictObject({
  credentials: z.unknown().optional().describe('new credentials for the same provider (replaces them all)'),
  is_active: z.boolean().optional(),
  ...settings,
});

export const integrationIdParams = z.object({ integration_id: z.string().describe('integration id (integer)') });

// ---- responses ------------------------------------------------------------------------------

export const integrationView = z
  .object({
    id: z.number().int(),
    provider_name: z.enum(PROVIDER_NAMES),
    provider_label: z.string(),
    key_label: z.string().nullable(),
    model: z.string().describe('the model calls use (credentials.model, else the provider default)'),
    is_active: z.boolean(),
    is_primary: z.boolean(),
    priority: z.number().int(),
    daily_limit: z.number().int().nullable(),
    daily_count: z.number().int().describe('requests this UTC day'),
    minute_limit: z.number().int().nullable(),
    minute_count: z.number().int().describe('requests this minute'),
    health_status: z.enum(['healthy', 'unhealthy']),
    consecutive_failures: z.number().int(),
    retry_at: z.string().nullable().describe('unhealthy: when the next call re-tests the key'),
    last_error: z.string().nullable(),
    last_used_at: z.string().nullable(),
    spend_limit_amount: z.number().nullable(),
    spend_limit_period: z.enum(['daily', 'monthly']),
    spend_limit_action: z.enum(['warn', 'block']),
    spend_limit_exceeded: z.boolean(),
    spend_current_period: z.number().describe('USD spent in the current period'),
    prices: prices,
    key_preview: z.record(z.string(), z.string()).describe('api_key masked (sk-...a1B2); settings as given'),
    created_at: z.string(),
  })
  .meta({ id: 'LlmIntegration' });

export const integrationResponse = z.object({ success: z.literal(true), integration: integrationView }).meta({ id: 'LlmIntegrationResponse' });
export const integrationListResponse = z.object({ success: z.literal(true), integrations: z.array(integrationView), total: z.number().int() }).meta({ id: 'LlmIntegrationList' });
export const integrationDeletedResponse = z.object({ success: z.literal(true), deleted: z.number().int() });
export const integrationTestResponse = z
  .object({
    success: z.literal(true),
    test: z.object({
      ok: z.boolean(),
      model: z.string(),
      latency_ms: z.number().int(),
      input_tokens: z.number().int().nullable(),
      output_tokens: z.number().int().nullable(),
      error: z.string().nullable().describe('why the check failed: the provider\'s answer or the network error'),
    }),
    integration: integrationView,
  })
  .meta({ id: 'LlmIntegrationTest' });
