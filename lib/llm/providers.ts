/**
 * The sixteen LLM providers a client may hold keys for (spec §4.9), what their `credentials` must
 * carry, where their APIs live and which model a call uses unless the integration names one.
 * Pure data and checks: the API validates with it, the adapters (lib/llm/call.ts) call with it.
 */
import { hasCredentials, isHttpUrl } from '../urls';

export const PROVIDER_NAMES = [
  'openai',
  'anthropic',
  'google_gemini',
  'mistral',
  'groq',
  'cohere',
  'deepseek',
  'xai',
  'together',
  'fireworks',
  'perplexity',
  'openrouter',
  'azure_openai',
  'cloudflare_workers_ai',
  'ollama',
  'openai_compatible',
] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Which wire format an adapter speaks. */
export type WireFormat = 'openai' | 'azure_openai' | 'anthropic' | 'google_gemini' | 'cohere';

export interface ProviderInfo {
  label: string;
  wire: WireFormat;
  /** API base including its version prefix; undefined: the client must give `base_url`. */
  baseUrl?: string;
  /** Credential fields besides the optional `base_url`/`model`; `api_key` unless the provider needs none. */
  required: readonly string[];
  defaultModel?: string;
}

export const PROVIDERS: Record<ProviderName, ProviderInfo> = {
  openai: {
    label: 'OpenAI',
    wire: 'openai',
    baseUrl: 'https://api.openai.com/v1',
    required: ['api_key'],
    defaultModel: 'gpt-4o-mini',
  },
  anthropic: {
    label: 'Anthropic',
    wire: 'anthropic',
    baseUrl: 'https://api.anthropic.com/v1',
    required: ['api_key'],
    defaultModel: 'claude-3-5-haiku-latest',
  },
  google_gemini: {
    label: 'Google Gemini',
    wire: 'google_gemini',
    baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
    required: ['api_key'],
    defaultModel: 'gemini-2.0-flash',
  },
  mistral: {
    label: 'Mistral AI',
    wire: 'openai',
    baseUrl: 'https://api.mistral.ai/v1',
    required: ['api_key'],
    defaultModel: 'mistral-small-latest',
  },
  groq: {
    label: 'Groq',
    wire: 'openai',
    baseUrl: 'https://api.groq.com/openai/v1',
    required: ['api_key'],
    defaultModel: 'llama-3.1-8b-instant',
  },
  cohere: {
    label: 'Cohere',
    wire: 'cohere',
    baseUrl: 'https://api.cohere.com/v2',
    required: ['api_key'],
    defaultModel: 'command-r-08-2024',
  },
  deepseek: {
    label: 'DeepSeek',
    wire: 'openai',
    baseUrl: 'https://api.deepseek.com/v1',
    required: ['api_key'],
    defaultModel: 'deepseek-chat',
  },
  xai: {
    label: 'xAI',
    wire: 'openai',
    baseUrl: 'https://api.x.ai/v1',
    required: ['api_key'],
    defaultModel: 'grok-3-mini',
  },
  together: {
    label: 'Together AI',
    wire: 'openai',
    baseUrl: 'https://api.together.xyz/v1',
    required: ['api_key'],
    defaultModel: 'meta-llama/Llama-3.3-70B-Instruct-Turbo',
  },
  fireworks: {
    label: 'Fireworks AI',
    wire: 'openai',
    baseUrl: 'https://api.fireworks.ai/inference/v1',
    required: ['api_key'],
    defaultModel: 'accounts/fireworks/models/llama-v3p1-8b-instruct',
  },
  perplexity: {
    label: 'Perplexity',
    wire: 'openai',
    baseUrl: 'https://api.perplexity.ai',
    required: ['api_key'],
    defaultModel: 'sonar',
  },
  openrouter: {
    label: 'OpenRouter',
    wire: 'openai',
    baseUrl: 'https://openrouter.ai/api/v1',
    required: ['api_key'],
    defaultModel: 'openai/gpt-4o-mini',
  },
  // The deployment names the model; the endpoint is the resource's https://<name>.openai.azure.com.
  azure_openai: { label: 'Azure OpenAI', wire: 'azure_openai', required: ['api_key', 'endpoint', 'deployment'] },
  // Workers AI's OpenAI-compatible endpoint (developers.cloudflare.com/workers-ai/configuration/open-ai-compatibility).
  cloudflare_workers_ai: {
    label: 'Cloudflare Workers AI',
    wire: 'openai',
    required: ['api_key', 'account_id'],
    defaultModel: '@cf/meta/llama-3.1-8b-instruct',
  },
  // Ollama's OpenAI-compatible API (http://<host>:11434/v1); it takes no key.
  ollama: { label: 'Ollama', wire: 'openai', required: ['base_url'], defaultModel: 'llama3.1' },
  openai_compatible: { label: 'OpenAI-compatible', wire: 'openai', required: ['base_url'] },
};

/** Credential fields that are settings, not secrets: shown in full in key_preview. */
const SETTINGS = ['base_url', 'endpoint', 'deployment', 'account_id', 'model', 'api_version'] as const;
const ALLOWED = new Set<string>(['api_key', ...SETTINGS]);

export type Credentials = Partial<Record<'api_key' | (typeof SETTINGS)[number], string>>;

export function isProviderName(v: unknown): v is ProviderName {
  return typeof v === 'string' && (PROVIDER_NAMES as readonly string[]).includes(v);
}

/**
 * The credentials of `provider`, or what is wrong with them (one sentence naming the field), as the
 * 400 of spec §4.9 says.
 */
export function checkCredentials(
  provider: ProviderName,
  raw: unknown,
): { ok: true; credentials: Credentials } | { ok: false; error: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    return { ok: false, error: 'credentials must be an object' };
  const info = PROVIDERS[provider];
  const out: Credentials = {};
  for (const [k, v] of Object.entries(raw)) {
    if (!ALLOWED.has(k))
      return {
        ok: false,
        error: `credentials.${k} is not a ${provider} credential (allowed: ${allowedFor(provider).join(', ')})`,
      };
    if (typeof v !== 'string' || v.trim() === '')
      return { ok: false, error: `credentials.${k} must be a non-empty string` };
    if (v.length > 4096) return { ok: false, error: `credentials.${k} is too long` };
    out[k as keyof Credentials] = v.trim();
  }
  for (const field of info.required) {
    if (!out[field as keyof Credentials]) return { ok: false, error: `${provider} requires credentials.${field}` };
  }
  if (provider === 'ollama' && out.api_key)
    return { ok: false, error: 'ollama takes no credentials.api_key (only base_url)' };
  for (const field of ['base_url', 'endpoint'] as const) {
    const v = out[field];
    if (v === undefined) continue;
    if (!isHttpUrl(v)) return { ok: false, error: `credentials.${field} must be an http(s) URL` };
    if (hasCredentials(v)) return { ok: false, error: `credentials.${field} must not carry a user or password` };
    out[field] = v.replace(/\/+$/, '');
  }
  if (out.account_id !== undefined && !/^[A-Za-z0-9]{1,64}$/.test(out.account_id))
    return { ok: false, error: 'credentials.account_id must be a Cloudflare account id (letters and digits)' };
  if (out.deployment !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(out.deployment))
    return { ok: false, error: 'credentials.deployment must be an Azure deployment name (letters, digits, ._-)' };
  if (provider === 'openai_compatible' && !out.model)
    return {
      ok: false,
      error: 'openai_compatible requires credentials.model (the server has no default this service knows)',
    };
  return { ok: true, credentials: out };
}

function allowedFor(provider: ProviderName): string[] {
  const info = PROVIDERS[provider];
  const names = new Set<string>([...info.required, 'base_url', 'model']);
  if (provider !== 'ollama') names.add('api_key');
  if (provider === 'azure_openai') names.add('api_version');
  return [...names];
}

/** What identifies a credential for the duplicate check: the key, and where it is used when that matters. */
export function credentialIdentity(c: Credentials): string {
  return JSON.stringify([c.api_key ?? '', c.base_url ?? '', c.endpoint ?? '', c.deployment ?? '', c.account_id ?? '']);
}

/** `sk-...a1B2`: the first characters up to the first dash (at most 3) and the last 4, never more than a quarter of the key. */
export function maskKey(key: string): string {
  // At most a quarter of the key is shown: a real key (40-100+ characters) shows its prefix and last
  // 4 (`sk-...a1B2`); a short one less, down to nothing.
  const budget = Math.floor(key.length / 4);
  const tail = budget >= 2 ? key.slice(-Math.min(4, budget)) : '';
  const dash = key.indexOf('-');
  const head = dash > 0 && dash <= 4 ? key.slice(0, dash + 1) : key.slice(0, 3);
  return head.length + tail.length <= budget ? `${head}...${tail}` : `...${tail}`;
}

/** key_preview (spec §2.12): masked secrets, settings as they are. */
export function keyPreview(c: Credentials): Record<string, string> {
  const out: Record<string, string> = {};
  if (c.api_key !== undefined) out.api_key = maskKey(c.api_key);
  for (const k of SETTINGS) {
    const v = c[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** The model a call uses: the integration's, else the provider's default (azure: the deployment). */
export function modelOf(provider: ProviderName, c: Credentials, override?: string | null): string {
  return (
    override ??
    c.model ??
    (provider === 'azure_openai' ? c.deployment : undefined) ??
    PROVIDERS[provider].defaultModel ??
    'default'
  );
}

/** The API base a call goes to. */
export function baseUrlOf(provider: ProviderName, c: Credentials): string {
  if (c.base_url) return c.base_url;
  if (provider === 'cloudflare_workers_ai')
    return `https://api.cloudflare.com/client/v4/accounts/${c.account_id ?? ''}/ai/v1`;
  if (provider === 'azure_openai') return c.endpoint ?? '';
  return PROVIDERS[provider].baseUrl ?? '';
}
