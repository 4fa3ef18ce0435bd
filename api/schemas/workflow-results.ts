import { z } from 'zod';
import { uuidParam } from './params';

const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const workflowResultsQuery = z.strictObject({
  wait: queryBool
    .default(true)
    .describe(
      "true (default): answer when every stage is done or timed out, at most until the pipeline's overall deadline; false: the current state at once",
    ),
});

export const workflowJobParams = z.object({ job_id: uuidParam('job id (UUID)') });
export const campaignJobParams = z.object({
  campaign_id: uuidParam('campaign id (UUID)'),
  job_id: uuidParam("job id (UUID) of one of the campaign's location jobs"),
});

export { workflowResults } from '../../jobs/workflow';
