import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { AzureOpenAI } from 'openai';
import { OutboundError, type OutboundClient } from '../outbound';
import { baseUrlOf, modelOf, PROVIDERS, type Credentials, type ProviderName } from './providers';

/**
 * One JSON-schema call to a provider, in its wire format: the official SDKs for OpenAI-compatible
 * APIs (twelve of the providers, Azure through its own client) and Anthropic; Gemini's
 * generateContent and Cohere's v2 chat by their documented formats. Every request goes through the
 * SSRF guard (the SDKs get a custom fetch over OutboundClient): base URLs come from clients.
 */
export interface LlmCall {
  provider: ProviderName;
  credentials: Credentials;
  instructions: string;
  input: string;
  /** JSON Schema of the answer (an object). */
  jsonSchema: Record<string, unknown>;
  signal?: AbortSignal;
  timeoutMs: number;
  maxOutputTokens?: number;
}

/** The tokens an answer reports, as the provider bills them. */
export interface LlmUsage {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export interface LlmAnswer extends LlmUsage {
  /** The parsed JSON of the answer (not yet checked against the schema). */
  json: unknown;
}

/**
 * rate_limited: 429 (and Anthropic's 529 overloaded): try the next key, this one after retryAfter.
 * auth: 401/403, the key is bad. invalid_output: the answer was not the JSON asked for.
 * unavailable: network, timeout, 5xx, a refused address. bad_request: the provider refused the request.
 */
export type LlmErrorKind = 'rate_limited' | 'auth' | 'bad_request' | 'unavailable' | 'invalid_output';

export class LlmError extends Error {
  constructor(
    readonly kind: LlmErrorKind,
    message: string,
    readonly retryAfterSeconds?: number,
    /** An answer that arrived but is unusable (invalid_output) still costs what it reports: callers record it. */
    readonly usage?: LlmUsage,
  ) {
    super(message);
  }
}

const SCHEMA_NAME = 'extraction';
const ANTHROPIC_VERSION_PREFIX = /\/v1$/;
const ANTHROPIC_API_VERSION = '2023-06-01';

export async function callLlm(http: OutboundClient, call: LlmCall): Promise<LlmAnswer> {
  const info = PROVIDERS[call.provider];
  const model = modelOf(call.provider, call.credentials);
  try {
    switch (info.wire) {
      case 'openai':
      case 'azure_openai':
        return await callOpenAi(http, call, model);
      case 'anthropic':
        return await callAnthropic(http, call, model);
      case 'google_gemini':
        return await callGemini(http, call, model);
      case 'cohere':
        return await callCohere(http, call, model);
    }
  } catch (err) {
    if (call.signal?.aborted) throw call.signal.reason;
    throw toLlmError(err);
  }
}

/** fetch for the SDKs: the request through the SSRF guard, answered as a WHATWG Response. */
export function guardedFetch(http: OutboundClient, timeoutMs: number, provider?: string): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const body = init?.body;
    if (body != null && typeof body !== 'string') throw new Error('guarded fetch sends string bodies only');
    const res = await http.fetch(url, {
      method: init?.method ?? 'GET',
      headers,
      body: body ?? undefined,
      signal: init?.signal ?? undefined,
      redirect: 'manual',
      timeoutMs,
      provider,
    });
    const nullBody = res.status === 204 || res.status === 304 || (init?.method ?? 'GET').toUpperCase() === 'HEAD';
    return new Response(nullBody ? null : new Uint8Array(res.body), { status: res.status, headers: res.headers });
  };
}

async function callOpenAi(http: OutboundClient, call: LlmCall, model: string): Promise<LlmAnswer> {
  const c = call.credentials;
  const common = {
    fetch: guardedFetch(http, call.timeoutMs, call.provider),
    maxRetries: 0,
    timeout: call.timeoutMs,
    organization: null,
    project: null,
  };
  const client =
    call.provider === 'azure_openai'
      ? new AzureOpenAI({
          ...common,
          apiKey: c.api_key ?? '',
          endpoint: c.endpoint ?? '',
          deployment: c.deployment ?? '',
          apiVersion: c.api_version ?? '2024-10-21',
        })
      : // Ollama ignores the key, but the SDK insists on one.
        new OpenAI({ ...common, apiKey: c.api_key ?? 'ollama', baseURL: baseUrlOf(call.provider, c) });
  const completion = await client.chat.completions.create(
    {
      model,
      messages: [
        { role: 'system', content: call.instructions },
        { role: 'user', content: call.input },
      ],
      response_format: {
        type: 'json_schema',
        json_schema: { name: SCHEMA_NAME, schema: call.jsonSchema, strict: false },
      },
      max_tokens: call.maxOutputTokens,
    },
    { signal: call.signal },
  );
  return answerOf(
    call.provider,
    completion.choices[0]?.message?.content,
    usageOf(completion.model || model, completion.usage?.prompt_tokens, completion.usage?.completion_tokens),
  );
}

async function callAnthropic(http: OutboundClient, call: LlmCall, model: string): Promise<LlmAnswer> {
  // The SDK appends /v1/messages itself; our base URLs carry the version prefix (docs/api.md, LLM integrations).
  const baseURL = baseUrlOf(call.provider, call.credentials).replace(ANTHROPIC_VERSION_PREFIX, '');
  const apiKey = call.credentials.api_key ?? '';
  // SDK 1.x defaults to API version 2026-10-21 with Bearer auth; we speak the documented 2023-06-01
  // format (x-api-key, providers.md), whose request and answer shapes this adapter builds and reads.
  // The key is still passed as apiKey so the SDK never looks for credentials in the environment or a profile.
  const client = new Anthropic({
    apiKey,
    baseURL,
    defaultHeaders: { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_API_VERSION, Authorization: null },
    fetch: guardedFetch(http, call.timeoutMs, call.provider),
    maxRetries: 0,
    timeout: call.timeoutMs,
  });
  // JSON output by forcing a tool whose input schema is the answer's schema (providers.md).
  const message = await client.messages.create(
    {
      model,
      max_tokens: call.maxOutputTokens ?? 2048,
      system: call.instructions,
      messages: [{ role: 'user', content: call.input }],
      tools: [
        {
          name: SCHEMA_NAME,
          description: 'Record the extracted data.',
          input_schema: { ...call.jsonSchema, type: 'object' },
        },
      ],
      tool_choice: { type: 'tool', name: SCHEMA_NAME },
    },
    { signal: call.signal },
  );
  const usage = usageOf(message.model || model, message.usage?.input_tokens, message.usage?.output_tokens);
  const block = message.content.find((b) => b.type === 'tool_use');
  if (!block || block.type !== 'tool_use')
    throw new LlmError(
      'invalid_output',
      'anthropic answered without the forced tool_use block',
      undefined,
      usage.reported ? usage : undefined,
    );
  return { json: block.input, model: usage.model, inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
}

/** generateContent (ai.google.dev/api/generate-content): JSON output by responseMimeType + responseJsonSchema. */
async function callGemini(http: OutboundClient, call: LlmCall, model: string): Promise<LlmAnswer> {
  const base = baseUrlOf(call.provider, call.credentials);
  const res = await http.fetch(`${base}/models/${encodeURIComponent(model)}:generateContent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-goog-api-key': call.credentials.api_key ?? '' },
    body: JSON.stringify({
      systemInstruction: { parts: [{ text: call.instructions }] },
      contents: [{ role: 'user', parts: [{ text: call.input }] }],
      generationConfig: {
        responseMimeType: 'application/json',
        responseJsonSchema: call.jsonSchema,
        maxOutputTokens: call.maxOutputTokens,
      },
    }),
    signal: call.signal,
    timeoutMs: call.timeoutMs,
    provider: call.provider,
  });
  const body = safeJson(res.text()) as
    | {
        candidates?: { content?: { parts?: { text?: string }[] } }[];
        usageMetadata?: { promptTokenCount?: number; candidatesTokenCount?: number };
        modelVersion?: string;
        error?: { message?: string };
      }
    | undefined;
  if (res.status >= 400) throw httpError('google_gemini', res.status, body?.error?.message, res.headers['retry-after']);
  const text = body?.candidates?.[0]?.content?.parts?.map((p) => p.text ?? '').join('');
  return answerOf(
    'google_gemini',
    text,
    usageOf(
      body?.modelVersion ?? model,
      body?.usageMetadata?.promptTokenCount,
      body?.usageMetadata?.candidatesTokenCount,
    ),
  );
}

/** Cohere v2 chat (docs.cohere.com/reference/chat): JSON output by response_format json_object with a json_schema. */
async function callCohere(http: OutboundClient, call: LlmCall, model: string): Promise<LlmAnswer> {
  const base = baseUrlOf(call.provider, call.credentials);
  const res = await http.fetch(`${base}/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${call.credentials.api_key ?? ''}` },
    body: JSON.stringify({
      model,
      messages: [
        { role: 'system', content: call.instructions },
        { role: 'user', content: call.input },
      ],
      response_format: { type: 'json_object', json_schema: call.jsonSchema },
      max_tokens: call.maxOutputTokens,
    }),
    signal: call.signal,
    timeoutMs: call.timeoutMs,
    provider: call.provider,
  });
  const body = safeJson(res.text()) as
    | ({
        message?: { content?: { type?: string; text?: string }[] };
        usage?: {
          tokens?: { input_tokens?: number; output_tokens?: number };
          billed_units?: { input_tokens?: number; output_tokens?: number };
        };
      } & { message?: unknown })
    | undefined;
  if (res.status >= 400)
    throw httpError(
      'cohere',
      res.status,
      typeof body?.message === 'string' ? body.message : undefined,
      res.headers['retry-after'],
    );
  const content = body?.message as { content?: { text?: string }[] } | undefined;
  const tokens = body?.usage?.tokens ?? body?.usage?.billed_units;
  return answerOf(
    'cohere',
    content?.content?.map((p) => p.text ?? '').join(''),
    usageOf(model, tokens?.input_tokens, tokens?.output_tokens),
  );
}

/** An answer's usage (0 for a count it leaves out); `reported`: whether it gave any count at all. */
function usageOf(
  model: string,
  inputTokens: number | null | undefined,
  outputTokens: number | null | undefined,
): LlmUsage & { reported: boolean } {
  return {
    model,
    inputTokens: inputTokens ?? 0,
    outputTokens: outputTokens ?? 0,
    reported: inputTokens != null || outputTokens != null,
  };
}

/**
 * The JSON of an answer's text, with its usage. Text that is not JSON throws invalid_output that
 * carries the usage the answer reported: the provider bills those tokens all the same.
 */
function answerOf(
  provider: string,
  text: string | null | undefined,
  { reported, ...usage }: LlmUsage & { reported: boolean },
): LlmAnswer {
  const unusable = (why: string) =>
    new LlmError('invalid_output', `${provider} answered ${why}`, undefined, reported ? usage : undefined);
  if (!text) throw unusable('with no content');
  // Some models wrap JSON in a Markdown fence despite the response format.
  const stripped = text
    .trim()
    .replace(/^```(?:json)?\s*/i, '')
    .replace(/\s*```$/, '');
  const parsed = safeJson(stripped);
  if (parsed === undefined) throw unusable('with text that is not JSON');
  return { json: parsed, ...usage };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function retryAfter(value: string | null | undefined): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n)) return Math.max(0, n);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

/** OpenAI's `x-ratelimit-reset-requests` ("6ms", "1s", "1m30s") as seconds, when a 429 has no Retry-After. */
function resetSeconds(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0) return undefined;
  const unit: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };
  return String(parts.reduce((sum, [, n, u]) => sum + Number(n) * (unit[u ?? 's'] ?? 1), 0));
}

function httpError(provider: string, status: number, message: string | undefined, retryAfterHeader?: string): LlmError {
  const why = `${provider} answered HTTP ${status}${message ? `: ${message}` : ''}`;
  if (status === 429 || status === 529) return new LlmError('rate_limited', why, retryAfter(retryAfterHeader));
  if (status === 401 || status === 403) return new LlmError('auth', why);
  if (status >= 500 || status === 408) return new LlmError('unavailable', why);
  return new LlmError('bad_request', why);
}

function toLlmError(err: unknown): LlmError {
  if (err instanceof LlmError) return err;
  if (err instanceof OpenAI.APIError || err instanceof Anthropic.APIError) {
    if (err.status === undefined) return new LlmError('unavailable', describeCause(err));
    const headers = err.headers as Headers | undefined;
    const wait = headers?.get('retry-after') ?? resetSeconds(headers?.get('x-ratelimit-reset-requests'));
    return httpError('provider', err.status, firstLine(err.message), wait ?? undefined);
  }
  if (err instanceof OutboundError) return new LlmError('unavailable', err.message);
  return new LlmError('unavailable', err instanceof Error ? err.message : String(err));
}

/** The SDKs wrap network errors (ours: the SSRF guard's refusal) as "Connection error."; the cause says what happened. */
function describeCause(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error ? cause.message : err.message;
}

const firstLine = (s: string) => s.split('\n')[0]?.slice(0, 300) ?? '';
