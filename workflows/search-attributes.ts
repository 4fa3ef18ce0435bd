/**
 * The typed search attributes operators filter by in the Temporal Web UI (`CampaignId = "<id>"`).
 * Workflow-safe, so the API (starting jobs and campaigns) and workflows (starting a campaign's
 * children) set the same keys.
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const ClientIdKey = defineSearchAttributeKey('ClientId', SearchAttributeType.KEYWORD);
export const JobTypeKey = defineSearchAttributeKey('JobType', SearchAttributeType.KEYWORD);
export const JobIdKey = defineSearchAttributeKey('JobId', SearchAttributeType.KEYWORD);
export const CampaignIdKey = defineSearchAttributeKey('CampaignId', SearchAttributeType.KEYWORD);
