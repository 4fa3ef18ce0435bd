import { z } from 'zod';
import { pipelineEnabled } from '../../jobs/workflow';
import { clientIdOf, type AppContext } from '../context';
import { describeColumns, type ExportRow } from '../exports/columns';
import { CONTENT_TYPES, exportStream, type ExportFormat } from '../exports/formats';
import { campaignRows, jobRows, type RowSources } from '../exports/rows';
import type { CampaignService } from '../campaign-service';
import type { ApiRouter } from '../routing';
import { NOT_A_WORKFLOW_JOB, type WorkflowResultsService } from '../workflow-results';
import { campaignExportParams, exportQuery, jobExportParams } from '../schemas/exports';

const FORMATS_DOC =
  'One row per business, streamed. csv: RFC 4180 (CRLF, header row, UTF-8 with a byte order mark unless bom=false), ' +
  'lists joined with "; ". xlsx: one sheet "businesses" with a header row; numbers and booleans are typed cells. ' +
  'ndjson (application/x-ndjson): one JSON object per line with the same keys, lists as arrays, empty values as null. ' +
  'In csv and xlsx a text that a spreadsheet would take for a formula (starting with = + - @, tab or CR) begins with a single quote ' +
  '(OWASP), except + or - followed only by digits and phone punctuation (phone numbers). Columns: ';

const exportResponse = z.string().describe('the export file, in the format chosen by `format`');
/** The 200 answer's media types, one per format (charset parameters aside). */
const exportContentTypes = Object.values(CONTENT_TYPES).map((type) => type.split(';')[0] as string);

export function exportRoutes(
  api: ApiRouter,
  // The export rows and the stored job results they are read from.
  sources: RowSources,
  // The lookups (and their 400/404 details) of the campaign and workflow-results endpoints.
  lookups: { workflowResults: Pick<WorkflowResultsService, 'jobOf'>; campaigns: Pick<CampaignService, 'get'> },
): void {
  function send(
    ctx: AppContext,
    format: ExportFormat,
    bom: boolean,
    name: string,
    rows: AsyncIterable<ExportRow>,
  ): void {
    ctx.status = 200;
    ctx.attachment(`${name}.${format}`);
    ctx.type = CONTENT_TYPES[format];
    ctx.set('Cache-Control', 'no-store');
    const log = ctx.state.log;
    ctx.body = exportStream(format, rows, {
      bom,
      onError: (err) => {
        // A client that hangs up mid-download is routine; anything else is a fault of ours.
        if ((err as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE')
          log.debug({ export: name }, 'export stopped: client went away');
        else log.error({ err, export: name }, 'export failed mid-stream; response cut off');
      },
    });
  }

  api.add({
    method: 'get',
    path: '/api/v1/campaigns/{campaign_id}/export',
    operationId: 'exportCampaign',
    summary: "Export a campaign's businesses as csv, xlsx or ndjson",
    description:
      `${FORMATS_DOC}${describeColumns()}. Campaign with a workflow: every business its location jobs' pipelines have stored so far, ` +
      'in location order then maps order. Without a workflow: the businesses of its completed location jobs, stage columns empty.',
    tags: ['campaigns'],
    security: 'client',
    ownFormat: true,
    params: campaignExportParams,
    query: exportQuery,
    responses: {
      200: {
        description: 'The export file (Content-Disposition attachment campaign-<id>.<format>)',
        contentType: exportContentTypes,
        schema: exportResponse,
      },
      400: { description: 'invalid campaign id format, expected UUID' },
      404: { description: 'campaign not found' },
    },
    handler: async (ctx, { params, query }) => {
      const clientId = clientIdOf(ctx);
      const campaign = await lookups.campaigns.get(clientId, params.campaign_id);
      const withWorkflow = pipelineEnabled({ workflow: campaign.workflow });
      send(
        ctx,
        query.format,
        query.bom,
        `campaign-${campaign.id}`,
        campaignRows(sources, clientId, campaign.id, withWorkflow),
      );
    },
  });

  api.add({
    method: 'get',
    path: '/api/v1/jobs/{job_id}/workflow-results/export',
    operationId: 'exportJobWorkflowResults',
    summary: "Export one crawlMaps job's workflow results as csv, xlsx or ndjson",
    description: `${FORMATS_DOC}${describeColumns()}. Only for crawlMaps jobs submitted with a workflow (standalone or in a campaign).`,
    tags: ['jobs'],
    security: 'client',
    ownFormat: true,
    params: jobExportParams,
    query: exportQuery,
    responses: {
      200: {
        description: 'The export file (Content-Disposition attachment job-<id>.<format>)',
        contentType: exportContentTypes,
        schema: exportResponse,
      },
      400: { description: `invalid job id format, expected UUID; or ${NOT_A_WORKFLOW_JOB}` },
      404: { description: 'job not found' },
    },
    handler: async (ctx, { params, query }) => {
      const clientId = clientIdOf(ctx);
      // The same job checks (and 400/404 details) as GET /api/v1/jobs/{job_id}/workflow-results.
      const job = await lookups.workflowResults.jobOf(clientId, params.job_id);
      const location = job.campaign_id ? await sources.exports.locationOfJob(job.id) : null;
      send(ctx, query.format, query.bom, `job-${job.id}`, jobRows(sources, clientId, job.id, location));
    },
  });
}
