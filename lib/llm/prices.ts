/**
 * USD per million tokens (input, output) of the providers' default models and a few common others,
 * from the providers' public price pages (November 2026). Config LLM_PRICES overrides or adds models;
 * an integration's own `prices` override both. A model in none of them costs 0 (local models, or an
 * unknown one): its usage is still counted, and docs/api.md says to add its price.
 */
export interface Price {
  input: number;
  output: number;
}

export const BUILT_IN_PRICES: Record<string, Price> = {
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1': { input: 2, output: 8 },
  'claude-3-5-haiku-latest': { input: 0.8, output: 4 },
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'claude-haiku-4-5': { input: 1, output: 5 },
  'gemini-2.0-flash': { input: 0.1, output: 0.4 },
  'gemini-2.5-flash': { input: 0.3, output: 2.5 },
  'mistral-small-latest': { input: 0.1, output: 0.3 },
  'llama-3.1-8b-instant': { input: 0.05, output: 0.08 },
  'command-r-08-2024': { input: 0.15, output: 0.6 },
  'deepseek-chat': { input: 0.27, output: 1.1 },
  'grok-3-mini': { input: 0.3, output: 0.5 },
  'meta-llama/Llama-3.3-70B-Instruct-Turbo': { input: 0.88, output: 0.88 },
  'accounts/fireworks/models/llama-v3p1-8b-instruct': { input: 0.2, output: 0.2 },
  sonar: { input: 1, output: 1 },
  'openai/gpt-4o-mini': { input: 0.15, output: 0.6 },
  '@cf/meta/llama-3.1-8b-instruct': { input: 0.28, output: 0.83 },
  'llama3.1': { input: 0, output: 0 },
};

/** The price of `model`: the integration's own, then config's, then the built-in table, else free. */
export function priceOf(model: string, configured: Record<string, Price>, own?: Price | null): Price {
  return own ?? configured[model] ?? BUILT_IN_PRICES[model] ?? { input: 0, output: 0 };
}

export function costUsd(price: Price, inputTokens: number, outputTokens: number): number {
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
