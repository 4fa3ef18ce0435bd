/**
 * The contract between the LLM integrations (activities/llm/, the client's provider keys of spec
 * §2.12/§4.9) and the job types that use AI extraction (crawlLanding's `extract_content`, crawlSite's
 * `ai_extraction`). A caller never sees keys or providers: it asks for JSON of a schema for a
 * client and gets the data, or the reason why there is none (recorded in its result's `errors`).
 */
import type { z } from 'zod';

export interface ExtractRequest<T> {
  clientId: string;
  /** What the call is for, recorded with its usage (e.g. `crawlLanding`, `crawlSite`). */
  purpose: string;
  /** The system instructions. */
  instructions: string;
  /** The text to extract from (already trimmed to what the model needs). */
  input: string;
  /** The JSON the answer must be: sent as JSON-schema output, and the answer parsed with it. */
  schema: z.ZodType<T>;
  signal?: AbortSignal;
}

export type ExtractOutcome<T> =
  | {
      ok: true;
      data: T;
      /** The integration's id, as in the integrations API. */ integrationId: number;
      provider: string;
      model: string;
    }
  | { ok: false; reason: string };

export interface LlmExtractor {
  /**
   * Picks the client's usable integration (active, healthy, primary first, then priority, within its
   * limits and spend), calls it, records usage; a 429 or failure moves to the next key. Never throws
   * for a provider problem: `{ok: false, reason}` (no usable integration, every key failed, ...).
   */
  extractJson<T>(request: ExtractRequest<T>): Promise<ExtractOutcome<T>>;
}
