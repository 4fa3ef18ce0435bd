import type { Knex } from 'knex';
import * as clients from './20261122000100_clients';
import * as jobs from './20261122000200_jobs';
import * as registryCache from './20261122000300_registry_cache';
import * as dedupe from './20261122000400_dedupe';
import * as idap from './20261122000500_idap';
import * as leadSearch from './20261122000600_lead_search';
import * as dedupeIdempotencyText from './20261122000700_dedupe_idempotency_text';
import * as businessDomainIndex from './20261122000800_business_domain_index';
import * as locations from './20261122000900_locations';
import * as webhooks from './20261122001000_webhooks';
import * as campaigns from './20261122001100_campaigns';
import * as campaignTerminalEvent from './20261122001120_campaign_terminal_event';
import * as integrations from './20261122001220_integrations';
import * as media from './20261125000200_media';
import * as unsubscribe from './20261125000300_unsubscribe';
import * as content from './20261125000310_content';
import * as mail from './20261125000400_mail';
import * as clientChangeNotify from './20261125000500_client_change_notify';
import * as jobsQueuedByQueue from './20261125000900_jobs_queued_by_queue';
import * as jobsDedupeKey from './20261126000100_jobs_dedupe_key';
import * as sourcePacing from './20261126000200_source_pacing';
import * as contentSiteVerification from './20261127000100_content_site_verification';
import * as businessKeyIndexes from './20261127000200_business_key_indexes';
import * as businessNameKeyIcu from './20261127000300_business_name_key_icu';
import * as contentTagNameUnique from './20261127000400_content_tag_name_unique';
import * as clientPreviousCredentials from './20261201000100_client_previous_credentials';
import * as streamTickets from './20261201000200_stream_tickets';
import * as projectionOutbox from './20261202000100_projection_outbox';
import * as dedupeFuzzyKeys from './20261204000100_dedupe_fuzzy_keys';
import * as dedupeBlocks from './20261207000100_dedupe_blocks';

/**
 * Migrations are listed here rather than discovered on disk, so the same list runs under tsx,
 * Jest and compiled JavaScript. Append new ones; never rename or reorder applied ones.
 */
const migrations: Record<string, Knex.Migration> = {
  '20261122000100_clients': clients,
  '20261122000200_jobs': jobs,
  '20261122000300_registry_cache': registryCache,
  '20261122000400_dedupe': dedupe,
  '20261122000500_idap': idap,
  '20261122000600_lead_search': leadSearch,
  '20261122000700_dedupe_idempotency_text': dedupeIdempotencyText,
  '20261122000800_business_domain_index': businessDomainIndex,
  '20261122000900_locations': locations,
  '20261122001000_webhooks': webhooks,
  '20261122001100_campaigns': campaigns,
  '20261122001120_campaign_terminal_event': campaignTerminalEvent,
  '20261122001220_integrations': integrations,
  '20261125000200_media': media,
  '20261125000300_unsubscribe': unsubscribe,
  '20261125000310_content': content,
  '20261125000400_mail': mail,
  '20261125000500_client_change_notify': clientChangeNotify,
  '20261125000900_jobs_queued_by_queue': jobsQueuedByQueue,
  '20261126000100_jobs_dedupe_key': jobsDedupeKey,
  '20261126000200_source_pacing': sourcePacing,
  '20261127000100_content_site_verification': contentSiteVerification,
  '20261127000200_business_key_indexes': businessKeyIndexes,
  '20261127000300_business_name_key_icu': businessNameKeyIcu,
  '20261127000400_content_tag_name_unique': contentTagNameUnique,
  '20261201000100_client_previous_credentials': clientPreviousCredentials,
  '20261201000200_stream_tickets': streamTickets,
  '20261202000100_projection_outbox': projectionOutbox,
  '20261204000100_dedupe_fuzzy_keys': dedupeFuzzyKeys,
  '20261207000100_dedupe_blocks': dedupeBlocks,
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => {
    const migration = migrations[name];
    if (!migration) throw new Error(`unknown migration ${name}`);
    return migration;
  },
};
