import { z } from 'zod';
import { EXPORT_FORMATS } from '../exports/formats';
import { uuidParam } from './params';

export const campaignExportParams = z.object({ campaign_id: uuidParam('campaign id (UUID)') });
export const jobExportParams = z.object({ job_id: uuidParam('job id (UUID)') });

const queryBool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

export const exportQuery = z.strictObject({
  format: z
    .enum(EXPORT_FORMATS)
    .default('csv')
    .describe('csv (RFC 4180, header row), xlsx (one sheet "businesses") or ndjson (one JSON object per line)'),
  bom: queryBool
    .default(true)
    .describe(
      'csv only: begin with a UTF-8 byte order mark (default true), which Excel needs to read accented text; false for tools that do not skip it',
    ),
});
