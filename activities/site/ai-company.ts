import { z } from 'zod';
import type { LlmExtractor } from '../llm';
import type { CompanyInfo } from './extract/company';

/**
 * crawlSite's opt-in AI extraction (`ai_extraction: true`): company_info filled from the crawl's
 * Markdown compendium by one of the client's LLM integrations. The model only fills what the
 * deterministic extractor left empty: what the markup says (JSON-LD, meta tags, the logo element) is
 * the site's own word, and logo_url is never taken from a model (it must be a URL the page has).
 */
const aiCompanyInfo = z.object({
  name: z.string().nullable().describe("the company's name as the site gives it"),
  description: z.string().nullable().describe('one or two sentences: what the company does'),
  industry: z.string().nullable().describe('the industry, in a few words'),
  key_services: z.array(z.string()).nullable().describe('its main products or services, at most 8'),
  target_audience: z.string().nullable().describe('who its customers are'),
  address: z.string().nullable().describe('its main postal address, one line'),
});

const INSTRUCTIONS =
  'You read the text of a company website (Markdown, one section per page) and describe the company. ' +
  "Answer only from the text; use null for anything it does not say. Keep the site's language for names and addresses; write the other fields in English.";

// About 12k tokens: the first pages (home, about, services) say what a company does.
export const AI_INPUT_CHARS = 48_000;

export interface AiCompanyOutcome {
  companyInfo: CompanyInfo;
  ai?: { integration_id: number; provider: string; model: string; fields: string[] };
  error?: string;
}

/**
 * `cancel` (the activity's cancellation) ends the activity; `timeoutMs` only ends the extraction,
 * which then leaves company_info as it was and says why.
 */
export async function fillCompanyInfo(
  extractor: LlmExtractor,
  clientId: string,
  markdown: string,
  info: CompanyInfo,
  cancel: AbortSignal,
  timeoutMs: number,
): Promise<AiCompanyOutcome> {
  if (!markdown.trim()) return { companyInfo: info, error: 'ai_extraction: the crawl found no text to read' };
  const deadline = AbortSignal.timeout(timeoutMs);
  let outcome;
  try {
    outcome = await extractor.extractJson({
      clientId,
      purpose: 'crawlSite',
      instructions: INSTRUCTIONS,
      input: markdown.slice(0, AI_INPUT_CHARS),
      schema: aiCompanyInfo,
      signal: AbortSignal.any([cancel, deadline]),
    });
  } catch (err) {
    if (cancel.aborted || !deadline.aborted) throw err;
    return { companyInfo: info, error: `ai_extraction: no answer within ${timeoutMs} ms` };
  }
  if (!outcome.ok) return { companyInfo: info, error: `ai_extraction: ${outcome.reason}` };
  const merged: CompanyInfo = { ...info };
  const fields: string[] = [];
  const ai = outcome.data;
  for (const key of ['name', 'description', 'industry', 'target_audience', 'address'] as const) {
    const value = ai[key]?.trim();
    if (merged[key] === null && value) {
      merged[key] = value;
      fields.push(key);
    }
  }
  const services = (ai.key_services ?? [])
    .map((s) => s.trim())
    .filter(Boolean)
    .slice(0, 8);
  if ((merged.key_services === null || merged.key_services.length === 0) && services.length > 0) {
    merged.key_services = services;
    fields.push('key_services');
  }
  return {
    companyInfo: merged,
    ai: { integration_id: outcome.integrationId, provider: outcome.provider, model: outcome.model, fields },
  };
}
