import type { ActivityDeps } from '../deps';
import type { LlmExtractor } from './types';

export type { ExtractOutcome, ExtractRequest, LlmExtractor } from './types';

/**
 * The client's LLM integrations as an extractor. Until the integrations store lands (issue 13) no
 * client has a usable integration, so every request answers why.
 */
export function createLlmExtractor(_deps: ActivityDeps): LlmExtractor {
  return {
    extractJson: () => Promise.resolve({ ok: false, reason: 'no usable LLM integration: the client has none configured' }),
  };
}
