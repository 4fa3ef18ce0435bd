import type { ActivityDeps } from '../deps';
import { IntegrationExtractor } from './select';
import type { LlmExtractor } from './types';

export type { ExtractOutcome, ExtractRequest, LlmExtractor } from './types';

/**
 * The client's LLM integrations (spec §2.12) as an extractor: selection, limits, spend, breaker and
 * usage in ./select.ts, the providers' wire formats in lib/llm/ (shared with the API's live check).
 */
export function createLlmExtractor(deps: ActivityDeps): LlmExtractor {
  return new IntegrationExtractor(deps);
}
