import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * Stand-ins for LLM providers on 127.0.0.1, in their real wire formats (../../../shared/providers.md,
 * "LLM providers"): an OpenAI-compatible server (`POST /v1/chat/completions`, Bearer key, answer in
 * `choices[0].message.content` with `usage`; 429 `rate_limit_exceeded` with Retry-After and the
 * x-ratelimit-* headers; 401 `invalid_api_key`) and an Anthropic server (`POST /v1/messages`,
 * `x-api-key` and `anthropic-version`, JSON through the forced tool's `tool_use` block, `usage`;
 * 429 `rate_limit_error` with retry-after; 401 `authentication_error`). One server speaks both.
 * A test fixture only.
 */

/**
 * What a key gets: an answer, a 429, a 500, no answer at all (`hang`), a 200 with its usage whose
 * content is prose instead of the JSON asked for (`prose`; Anthropic: a text block, no tool_use), or
 * (a key the stand-in does not know) a 401.
 */
export type KeyBehaviour = 'ok' | 'rate_limited' | 'server_error' | 'hang' | 'prose';

/** What a `prose` key's model says instead of JSON. */
export const PROSE_ANSWER = 'Sure! Here is what I found: hello, not JSON.';

export interface LlmRequestLog {
  format: 'openai' | 'anthropic' | 'google_gemini' | 'cohere';
  apiKey: string;
  model: string;
  body: Record<string, unknown>;
  /** Path and query as received. */
  path: string;
  /** When the caller hung up on a `hang` key (Date.now()). */
  closedAt?: number;
}

export interface LlmStandIn {
  baseUrl: string;
  /** Keys the stand-in accepts and what each gets (change it between calls). */
  keys: Map<string, KeyBehaviour>;
  /** The JSON the model "answers" (as message content / tool input). */
  answer: unknown;
  usage: { input: number; output: number };
  /** Seconds in Retry-After on a 429. */
  retryAfterSeconds: number;
  /** Leave Retry-After out of OpenAI-format 429s (x-ratelimit-reset-requests still says when). */
  omitRetryAfter: boolean;
  requests: LlmRequestLog[];
  close(): Promise<void>;
}

export async function startLlmStandIn(): Promise<LlmStandIn> {
  const state = {
    keys: new Map<string, KeyBehaviour>(),
    answer: { ok: true } as unknown,
    usage: { input: 1000, output: 200 },
    retryAfterSeconds: 30,
    omitRetryAfter: false,
    requests: [] as LlmRequestLog[],
  };

  const server = createServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { error: { message: 'stand-in failure', type: 'server_error' } });
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    const path = (req.url ?? '').split('?')[0];
    // Any OpenAI-compatible base: /v1, Azure's /openai/deployments/<name>, Workers AI's /client/v4/accounts/<id>/ai/v1.
    if (req.method === 'POST' && path?.endsWith('/chat/completions')) return openAi(req, res, body);
    if (req.method === 'POST' && path === '/v1/messages') return anthropic(req, res, body);
    const gemini = /^\/v1beta\/models\/([^/:]+):generateContent$/.exec(path ?? '');
    if (req.method === 'POST' && gemini) return googleGemini(req, res, body, decodeURIComponent(gemini[1] ?? ''));
    if (req.method === 'POST' && path === '/v2/chat') return cohere(req, res, body);
    send(res, 404, {
      error: {
        message: `Unknown request URL: ${req.method} ${path}`,
        type: 'invalid_request_error',
        code: 'unknown_url',
      },
    });
  }

  function openAi(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
    // Azure sends its key as `api-key` and the deployment in the path (and api-version in the query).
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? String(req.headers['api-key'] ?? '');
    const behaviour = state.keys.get(key);
    state.requests.push({ format: 'openai', apiKey: key, model: String(body.model), body, path: req.url ?? '' });
    if (!behaviour) {
      return send(res, 401, {
        error: {
          message: `Incorrect API key provided: ${key.slice(0, 3)}...${key.slice(-4)}.`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
    }
    if (behaviour === 'rate_limited') {
      return send(
        res,
        429,
        {
          error: {
            message: `Rate limit reached for ${String(body.model)} on requests per min (RPM): Limit 3, Used 3, Requested 1.`,
            type: 'requests',
            param: null,
            code: 'rate_limit_exceeded',
          },
        },
        {
          ...(state.omitRetryAfter ? {} : { 'retry-after': String(state.retryAfterSeconds) }),
          'x-ratelimit-limit-requests': '3',
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': `${Math.floor(state.retryAfterSeconds / 60)}m${state.retryAfterSeconds % 60}s`,
        },
      );
    }
    if (behaviour === 'server_error')
      return send(res, 500, {
        error: {
          message: 'The server had an error while processing your request.',
          type: 'server_error',
          param: null,
          code: null,
        },
      });
    if (behaviour === 'hang') return hang(res);
    const format = body.response_format as { type?: string } | undefined;
    if (format?.type !== 'json_schema' && format?.type !== 'json_object') {
      return send(res, 400, {
        error: {
          message: 'this stand-in answers JSON only: set response_format',
          type: 'invalid_request_error',
          param: 'response_format',
          code: null,
        },
      });
    }
    send(
      res,
      200,
      {
        id: `chatcmpl-${state.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: String(body.model),
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: behaviour === 'prose' ? PROSE_ANSWER : JSON.stringify(state.answer),
              refusal: null,
            },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: {
          prompt_tokens: state.usage.input,
          completion_tokens: state.usage.output,
          total_tokens: state.usage.input + state.usage.output,
        },
      },
      {
        'x-ratelimit-limit-requests': '10000',
        'x-ratelimit-remaining-requests': '9999',
        'x-ratelimit-reset-requests': '6ms',
      },
    );
  }

  function anthropic(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
    const key = String(req.headers['x-api-key'] ?? '');
    const behaviour = state.keys.get(key);
    state.requests.push({ format: 'anthropic', apiKey: key, model: String(body.model), body, path: req.url ?? '' });
    if (req.headers['anthropic-version'] !== '2023-06-01') {
      return send(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'anthropic-version: header is required' },
      });
    }
    if (!behaviour)
      return send(res, 401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } });
    if (behaviour === 'rate_limited') {
      return send(
        res,
        429,
        {
          type: 'error',
          error: {
            type: 'rate_limit_error',
            message: 'Number of request tokens has exceeded your per-minute rate limit',
          },
        },
        { 'retry-after': String(state.retryAfterSeconds) },
      );
    }
    if (behaviour === 'server_error')
      return send(res, 500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } });
    const choice = body.tool_choice as { type?: string; name?: string } | undefined;
    const tools = body.tools as { name: string }[] | undefined;
    if (choice?.type !== 'tool' || !tools?.some((t) => t.name === choice.name)) {
      return send(res, 400, {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: 'this stand-in answers JSON only: force a tool with tool_choice',
        },
      });
    }
    send(res, 200, {
      id: `msg_${state.requests.length}`,
      type: 'message',
      role: 'assistant',
      model: String(body.model),
      content:
        behaviour === 'prose'
          ? [{ type: 'text', text: PROSE_ANSWER }]
          : [{ type: 'tool_use', id: `toolu_${state.requests.length}`, name: choice.name, input: state.answer }],
      stop_reason: behaviour === 'prose' ? 'end_turn' : 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: state.usage.input, output_tokens: state.usage.output },
    });
  }

  /** Never answers; records when the caller gives up (a cancel must close the connection). */
  function hang(res: ServerResponse): void {
    const entry = state.requests.at(-1);
    res.on('close', () => {
      if (entry) entry.closedAt = Date.now();
    });
  }

  /** Gemini generateContent (ai.google.dev/api/generate-content): `x-goog-api-key`, JSON text in the first candidate, usageMetadata. */
  function googleGemini(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>, model: string): void {
    const key = String(req.headers['x-goog-api-key'] ?? '');
    const behaviour = state.keys.get(key);
    state.requests.push({ format: 'google_gemini', apiKey: key, model, body, path: req.url ?? '' });
    if (!behaviour)
      return send(res, 400, {
        error: { code: 400, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' },
      });
    if (behaviour === 'rate_limited')
      return send(
        res,
        429,
        {
          error: {
            code: 429,
            message: 'Resource has been exhausted (e.g. check quota).',
            status: 'RESOURCE_EXHAUSTED',
          },
        },
        { 'retry-after': String(state.retryAfterSeconds) },
      );
    if (behaviour === 'server_error')
      return send(res, 500, { error: { code: 500, message: 'An internal error has occurred.', status: 'INTERNAL' } });
    send(res, 200, {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: behaviour === 'prose' ? PROSE_ANSWER : JSON.stringify(state.answer) }],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: state.usage.input,
        candidatesTokenCount: state.usage.output,
        totalTokenCount: state.usage.input + state.usage.output,
      },
      modelVersion: model,
    });
  }

  /** Cohere v2 chat (docs.cohere.com/reference/chat): Bearer key, JSON text in message.content, usage.tokens. */
  function cohere(req: IncomingMessage, res: ServerResponse, body: Record<string, unknown>): void {
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const behaviour = state.keys.get(key);
    state.requests.push({ format: 'cohere', apiKey: key, model: String(body.model), body, path: req.url ?? '' });
    if (!behaviour) return send(res, 401, { id: 'e1', message: 'invalid api token' });
    if (behaviour === 'rate_limited')
      return send(res, 429, {
        id: 'e2',
        message: 'You are using a Trial key, which is limited to 10 API calls / minute.',
      });
    if (behaviour === 'server_error') return send(res, 500, { id: 'e3', message: 'internal server error' });
    send(res, 200, {
      id: `c-${state.requests.length}`,
      finish_reason: 'COMPLETE',
      message: {
        role: 'assistant',
        content: [{ type: 'text', text: behaviour === 'prose' ? PROSE_ANSWER : JSON.stringify(state.answer) }],
      },
      usage: {
        billed_units: { input_tokens: state.usage.input, output_tokens: state.usage.output },
        tokens: { input_tokens: state.usage.input, output_tokens: state.usage.output },
      },
    });
  }

  const { baseUrl, close } = await listenLocal(server);
  return Object.assign(state, { baseUrl, close }) as LlmStandIn;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
