import { z } from 'zod';
import { PROVIDER_NAMES } from '../../lib/llm/providers';

// ---- requests -------------------------------------------------------------------------------

// price_input and price_output are decimal(12,6): more decimal places would be rounded away.
const PRICE_DECIMALS = 6;
const price = z
  .number()
  .min(0)
  .max(10000)
  .refine(
    (v) => decimalPlaces(v) <= PRICE_DECIMALS,
    `a price may have at most ${PRICE_DECIMALS} decimal places (USD per million tokens)`,
  )
  .describe(
    `USD per million tokens, at most ${PRICE_DECIMALS} decimal places (as stored; more is refused, not rounded)`,
  );
const prices = z
  .strictObject({ input: price, output: price })
  .nullable()
  .describe("USD per million tokens for this key (over LLM_PRICES and the built-in table); null: the table's");

// daily_limit and minute_limit are Postgres integer columns.
const PG_INTEGER_MAX = 2 ** 31 - 1;

// spend_limit_amount is stored as decimal(14,4): more decimal places would be rounded away (0.00004 to 0, a limit reached at once).
const SPEND_DECIMALS = 4;

/**
 * Decimal places of a number as a client wrote it: the shortest decimal that reads back as the same
 * double (JS's number to string), so 0.3 has 1 whatever its binary value; exponent forms (1e-7) count too.
 */
function decimalPlaces(v: number): number {
  const [mantissa = '', exponent = '0'] = String(v).split('e');
  return Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exponent));
}

const settings = {
  key_label: z.string().trim().min(1).max(200).nullable().optional(),
  is_primary: z.boolean().optional().describe('primary keys are selected first (default false)'),
  priority: z
    .number()
    .int()
    .min(0)
    .max(1000)
    .optional()
    .describe('higher first, after primary; default 10 for primary keys, 0 for others'),
  daily_limit: z
    .number()
    .int()
    .min(1)
    .max(PG_INTEGER_MAX)
    .nullable()
    .optional()
    .describe('requests per UTC day, counted by all workers together'),
  minute_limit: z
    .number()
    .int()
    .min(1)
    .max(PG_INTEGER_MAX)
    .nullable()
    .optional()
    .describe('requests per minute, counted by all workers together'),
  spend_limit_amount: z
    .number()
    .min(0)
    .max(1e9)
    .refine(
      (v) => decimalPlaces(v) <= SPEND_DECIMALS,
      `spend_limit_amount may have at most ${SPEND_DECIMALS} decimal places (USD to 0.0001)`,
    )
    .nullable()
    .optional()
    .describe(
      `USD per period, at most ${SPEND_DECIMALS} decimal places (stored to 0.0001 USD; more is refused, not rounded)`,
    ),
  spend_limit_period: z.enum(['daily', 'monthly']).optional().describe('default monthly'),
  spend_limit_action: z
    .enum(['warn', 'block'])
    .optional()
    .describe(
      'warn: flag and event integration.spend_limit_exceeded; block: the key is skipped until the period ends (default warn)',
    ),
  prices: prices.optional(),
};

// provider_name and credentials are checked by the handler, so that a bad one is the 400 of spec §4.9 (not a 422).
export const integrationCreateBody = z.strictObject({
  provider_name: z
    .unknown()
    .optional()
    .describe(`one of ${PROVIDER_NAMES.join(', ')}`),
  credentials: z
    .unknown()
    .optional()
    .describe(
      'api_key; azure_openai also endpoint and deployment; cloudflare_workers_ai also account_id; ollama base_url (no key); openai_compatible base_url and model. Optional: base_url (with the version prefix), model',
    ),
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

export const integrationResponse = z
  .object({ success: z.literal(true), integration: integrationView })
  .meta({ id: 'LlmIntegrationResponse' });
export const integrationListResponse = z
  .object({ success: z.literal(true), integrations: z.array(integrationView), total: z.number().int() })
  .meta({ id: 'LlmIntegrationList' });
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
      error: z.string().nullable().describe("why the check failed: the provider's answer or the network error"),
    }),
    integration: integrationView,
  })
  .meta({ id: 'LlmIntegrationTest' });
