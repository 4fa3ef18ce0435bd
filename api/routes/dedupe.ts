import type { CanonicalRecordModel } from '../../db/models/canonical-record';
import type { CheckResult, DedupeRepository } from '../../db/repositories/dedupe';
import { clientIdOf } from '../context';
import type { ApiRouter } from '../routing';
import {
  canonicalIdParams,
  canonicalMergeBody,
  canonicalMergeResponse,
  canonicalUnmergeResponse,
  canonicalListQuery,
  canonicalListResponse,
  dedupeCheckBatchBody,
  dedupeCheckBatchResponse,
  dedupeCheckBody,
  dedupeCheckResponse,
} from '../schemas/dedupe';

export interface DedupeRoutesOptions {
  /** DEDUPE_ENABLED: false answers every check as skipped with reason dedupe_not_configured (spec §4.6). */
  enabled: boolean;
  /** DEDUPE_MERGE_UNDO_DAYS: how long a merge can be undone. */
  mergeUndoDays: number;
}

const NOT_CONFIGURED = 'dedupe_not_configured';

function checkView(r: CheckResult) {
  return r.isDuplicate
    ? {
        success: true,
        is_duplicate: true,
        confidence: r.confidence,
        matched_record_id: r.matchedId,
        match_type: r.matchType,
        canonical_id: null,
        added_to_canonical: false,
        skipped: false,
        reason: null,
        ...(r.explanation ? { explanation: r.explanation } : {}),
      }
    : {
        success: true,
        is_duplicate: false,
        confidence: 0,
        matched_record_id: null,
        match_type: null,
        canonical_id: r.canonicalId,
        added_to_canonical: r.added,
        skipped: false,
        reason: null,
      };
}

function canonicalView(r: CanonicalRecordModel) {
  return {
    id: Number(r.id),
    record_hash: r.record_hash,
    record_type: r.record_type,
    email: r.email,
    full_name: r.full_name,
    company_name: r.company_name,
    company_domain: r.company_domain,
    maps_place_id: r.maps_place_id,
    proflink_url: r.proflink_url,
    phone: r.phone,
    city: r.city,
    country: r.country,
    source_worker: r.source_worker,
    campaign_id: r.campaign_id,
    created_at: new Date(r.created_at).toISOString(),
  };
}

export function dedupeRoutes(api: ApiRouter, repo: DedupeRepository, options: DedupeRoutesOptions): void {
  api.add({
    method: 'post',
    path: '/api/v1/dedupe/check',
    operationId: 'dedupeCheck',
    summary: 'Check one record against the canonical store',
    description:
      'Matching order, first match wins: maps_place_id, email (lower-cased), proflink_url (normalised), phone (digits), ' +
      'company_domain (or the domain of website), exact_hash (SHA-256 of all normalised fields); then, with fuzzy, fuzzy_business ' +
      'or fuzzy_contact (see the fuzzy field), whose confidence the threshold compares against and whose explanation says which fields agreed. ' +
      'A unique record is added to the canonical store unless add_to_canonical is false. Concurrent checks of the same new record add it once.',
    tags: ['dedupe'],
    security: 'client',
    body: dedupeCheckBody,
    responses: { 200: { description: 'The verdict', schema: dedupeCheckResponse } },
    handler: async (ctx, { body }) => {
      if (!options.enabled) {
        ctx.body = {
          success: true,
          is_duplicate: false,
          confidence: 0,
          matched_record_id: null,
          match_type: null,
          canonical_id: null,
          added_to_canonical: false,
          skipped: true,
          reason: NOT_CONFIGURED,
        };
        return;
      }
      const [result] = await repo.check({
        clientId: clientIdOf(ctx),
        recordType: body.record_type,
        records: [body.record],
        addToCanonical: body.add_to_canonical,
        campaignId: body.campaign_id ?? null,
        threshold: body.threshold,
        sourceWorker: 'api',
        fuzzy: body.fuzzy,
      });
      ctx.body = checkView(result as CheckResult);
    },
  });

  api.add({
    method: 'post',
    path: '/api/v1/dedupe/check-batch',
    operationId: 'dedupeCheckBatch',
    summary: 'Check 1-100 records against the canonical store',
    description:
      'Records are checked in order, as if one by one: with add_to_canonical a later record matches the canonical record ' +
      'an earlier one created. With an idempotency_key the same key returns the same response for 5 minutes.',
    tags: ['dedupe'],
    security: 'client',
    body: dedupeCheckBatchBody,
    responses: {
      200: { description: 'Unique records, duplicates with their match, and counts', schema: dedupeCheckBatchResponse },
    },
    handler: async (ctx, { body }) => {
      if (!options.enabled) {
        ctx.body = {
          success: true,
          unique: body.records,
          duplicates: [],
          stats: {
            total_checked: body.records.length,
            unique_count: body.records.length,
            duplicate_count: 0,
            added_to_canonical: 0,
            skipped: true,
            reason: NOT_CONFIGURED,
          },
        };
        return;
      }
      const clientId = clientIdOf(ctx);
      ctx.body = await repo.idempotent(clientId, body.idempotency_key, async (db) => {
        const results = await repo.check(
          {
            clientId,
            recordType: body.record_type,
            records: body.records,
            addToCanonical: body.add_to_canonical,
            campaignId: body.campaign_id ?? null,
            threshold: body.threshold,
            sourceWorker: 'api',
            fuzzy: body.fuzzy,
          },
          db,
        );
        const unique = body.records.filter((_, i) => results[i]?.isDuplicate === false);
        const duplicates = body.records.flatMap((record, i) => {
          const r = results[i];
          return r?.isDuplicate
            ? [
                {
                  record,
                  matched_canonical_id: r.matchedId,
                  confidence: r.confidence,
                  match_type: r.matchType,
                  ...(r.explanation ? { explanation: r.explanation } : {}),
                },
              ]
            : [];
        });
        return {
          success: true,
          unique,
          duplicates,
          stats: {
            total_checked: body.records.length,
            unique_count: unique.length,
            duplicate_count: duplicates.length,
            added_to_canonical: results.filter((r) => !r.isDuplicate && r.added).length,
            skipped: false,
            reason: null,
          },
        };
      });
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/dedupe/canonical',
    operationId: 'listCanonicalRecords',
    summary: 'List canonical records, newest first',
    description: 'Soft-deleted records are omitted.',
    tags: ['dedupe'],
    security: 'client',
    query: canonicalListQuery,
    responses: { 200: { description: 'A page of canonical records', schema: canonicalListResponse } },
    handler: async (ctx, { query }) => {
      const { total, records } = await repo.listCanonical(clientIdOf(ctx), {
        recordType: query.record_type,
        campaignId: query.campaign_id,
        limit: query.limit,
        offset: query.offset,
      });
      ctx.body = {
        success: true,
        records: records.map(canonicalView),
        total,
        limit: query.limit,
        offset: query.offset,
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/v1/dedupe/canonical/{id}/merge',
    operationId: 'mergeCanonicalRecords',
    summary: 'Merge canonical records into one',
    description:
      'The records of record_ids then point to canonical record {id}: they leave the listing, and a check that matches any of their keys ' +
      'answers {id}. Idempotent. The merge can be undone with POST .../unmerge for DEDUPE_MERGE_UNDO_DAYS (30 by default). ' +
      'Refused: an unknown id (404); {id} among record_ids or a record of another record_type (400); {id} merged itself, a record merged ' +
      'into another, or one that others are merged into (409).',
    tags: ['dedupe'],
    security: 'client',
    params: canonicalIdParams,
    body: canonicalMergeBody,
    responses: {
      200: { description: 'Merged', schema: canonicalMergeResponse },
      400: { description: 'A record merged into itself, or of another record_type' },
      404: { description: 'canonical record not found' },
      409: { description: 'A record merged elsewhere, or with records merged into it' },
    },
    handler: async (ctx, { params, body }) => {
      const { merged, mergedAt } = await repo.merge(clientIdOf(ctx), params.id, body.record_ids);
      const undoUntil = new Date(mergedAt.getTime() + options.mergeUndoDays * 86_400_000).toISOString();
      ctx.body = { success: true, canonical_id: params.id, merged_record_ids: merged, undo_until: undoUntil };
    },
  });

  api.add({
    method: 'post',
    path: '/api/v1/dedupe/canonical/{id}/unmerge',
    operationId: 'unmergeCanonicalRecords',
    summary: 'Undo a merge',
    description:
      'Each record of record_ids, merged into {id} within DEDUPE_MERGE_UNDO_DAYS, is its own canonical record again.',
    tags: ['dedupe'],
    security: 'client',
    params: canonicalIdParams,
    body: canonicalMergeBody,
    responses: {
      200: { description: 'Unmerged', schema: canonicalUnmergeResponse },
      404: { description: 'canonical record not found' },
      409: { description: 'A record not merged into {id}, or merged longer ago than the undo window' },
    },
    handler: async (ctx, { params, body }) => {
      const unmerged = await repo.unmerge(clientIdOf(ctx), params.id, body.record_ids, options.mergeUndoDays);
      ctx.body = { success: true, canonical_id: params.id, unmerged_record_ids: unmerged };
    },
  });
}
