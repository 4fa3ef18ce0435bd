import { z } from 'zod';
import {
  IntegrationRepository,
  spendBlocked,
  type IntegrationState,
  type UsageRecord,
} from '../../db/repositories/integrations';
import { callLlm, LlmError, type LlmUsage } from '../../lib/llm/call';
import { CredentialCipher } from '../../lib/llm/cipher';
import { costUsd, priceOf } from '../../lib/llm/prices';
import { endpointHttp, type ActivityDeps } from '../deps';
import type { ExtractOutcome, ExtractRequest, LlmExtractor } from './types';

/**
 * The real extractor. For each request: the client's candidate keys in order (active; healthy, or
 * unhealthy with its cool-down over; primary first, then priority), each reserved in Postgres
 * against its minute and day limits before it is called. Keys over a `block` spend limit are
 * skipped. A 429 pauses the key for its Retry-After and moves on; any other failure counts towards
 * the breaker and moves on. The first valid answer wins. Every answer's usage and cost are
 * recorded, also of one that is not JSON or not of the schema: the provider billed its tokens.
 */
export class IntegrationExtractor implements LlmExtractor {
  private repoCache: IntegrationRepository | undefined;

  constructor(private readonly deps: ActivityDeps) {}

  /** Built at the first call: activities are created at worker start, and most never call an LLM. */
  private get repo(): IntegrationRepository | undefined {
    if (this.repoCache) return this.repoCache;
    const { config } = this.deps;
    const cipher = CredentialCipher.fromConfig(config);
    if (cipher) this.repoCache = new IntegrationRepository(this.deps.db, cipher, config.DATABASE_SCHEMA);
    return this.repoCache;
  }

  async extractJson<T>(request: ExtractRequest<T>): Promise<ExtractOutcome<T>> {
    const { repo } = this;
    if (!repo)
      return {
        ok: false,
        reason: 'no usable LLM integration: INTEGRATIONS_ENCRYPTION_KEY is not configured on this worker',
      };
    const { config } = this.deps;
    const candidates = await repo.candidates(request.clientId);
    if (candidates.length === 0)
      return { ok: false, reason: 'no usable LLM integration: the client has no active, healthy key' };
    const jsonSchema = z.toJSONSchema(request.schema, { target: 'draft-7', unrepresentable: 'any' }) as Record<
      string,
      unknown
    >;
    delete jsonSchema.$schema;
    const skipped: string[] = [];
    for (const key of candidates) {
      request.signal?.throwIfAborted();
      const name = describe(key);
      if (spendBlocked(key)) {
        skipped.push(`${name}: spend limit reached`);
        continue;
      }
      if (!(await repo.reserve(key.id, config.LLM_BREAKER_COOLDOWN_SECONDS))) {
        skipped.push(`${name}: request limit reached`);
        continue;
      }
      const usageRecord = (u: LlmUsage): UsageRecord => ({
        purpose: request.purpose,
        model: key.model,
        inputTokens: u.inputTokens,
        outputTokens: u.outputTokens,
        costUsd: costUsd(priceOf(key.model, config.LLM_PRICES, repo.ownPrice(key)), u.inputTokens, u.outputTokens),
      });
      try {
        const answer = await callLlm(endpointHttp(this.deps), {
          provider: key.provider_name,
          credentials: repo.credentials(key),
          instructions: request.instructions,
          input: request.input,
          jsonSchema,
          signal: request.signal,
          timeoutMs: config.LLM_TIMEOUT_MS,
        });
        // Tokens were spent whether or not the answer fits the schema.
        await repo.recordSuccess(key, usageRecord(answer));
        const parsed = request.schema.safeParse(answer.json);
        if (!parsed.success) {
          skipped.push(
            `${name}: the answer did not match the schema (${parsed.error.issues[0]?.message ?? 'invalid'})`,
          );
          continue;
        }
        return { ok: true, data: parsed.data, integrationId: key.id, provider: key.provider_name, model: answer.model };
      } catch (err) {
        if (request.signal?.aborted) throw request.signal.reason;
        const e =
          err instanceof LlmError ? err : new LlmError('unavailable', err instanceof Error ? err.message : String(err));
        if (e.usage) await repo.recordUsage(key, usageRecord(e.usage));
        if (e.kind === 'rate_limited') {
          await repo.recordRateLimited(key.id, e.retryAfterSeconds ?? 60, e.message);
        } else {
          await repo.recordFailure(key.id, e.message, config.LLM_BREAKER_FAILURES, config.LLM_BREAKER_COOLDOWN_SECONDS);
        }
        this.deps.logger.warn({ integrationId: key.id, provider: key.provider_name, kind: e.kind }, 'LLM call failed');
        skipped.push(`${name}: ${e.message}`);
      }
    }
    return { ok: false, reason: `no usable LLM integration: ${skipped.join('; ')}` };
  }
}

const describe = (k: IntegrationState) => `${k.provider_name} #${k.id}${k.key_label ? ` (${k.key_label})` : ''}`;
