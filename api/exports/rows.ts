/**
 * Where the rows of an export come from: workflow_businesses for jobs run with the maps -> site ->
 * verify pipeline; for a campaign without a pipeline, each completed location job's stored crawlMaps
 * result, one job at a time. Lazy: nothing is read until the writer asks for the next row.
 */
import type { ExportRepository } from '../../db/repositories/exports';
import type { JobResultStore } from '../../db/repositories/job-results';
import type { MapsBusiness } from '../../jobs/crawl-maps';
import { rowFromMaps, rowFromWorkflow, type ExportRow } from './columns';

export interface RowSources {
  exports: ExportRepository;
  results: JobResultStore;
}

type MapsResult = { businesses?: Partial<MapsBusiness>[] } | undefined;

export async function* jobRows(
  src: RowSources,
  clientId: string,
  jobId: string,
  location: string | null,
): AsyncGenerator<ExportRow> {
  const categories = await categoriesOf(src, jobId);
  for await (const b of src.exports.workflowBusinesses(clientId, jobId, location))
    yield rowFromWorkflow(b, categories.get(b.place_id) ?? null);
}

/**
 * Place id -> first maps category of a job: the pipeline's rows keep the §2.8 listing fields only,
 * the category is in the job's maps result. Only the map outlives this call, not the whole result.
 */
async function categoriesOf(src: RowSources, jobId: string): Promise<Map<string, string>> {
  const result = (await src.results.load(jobId)) as MapsResult;
  const categories = new Map<string, string>();
  for (const b of result?.businesses ?? []) {
    const category = Array.isArray(b.categories) ? b.categories[0] : undefined;
    if (typeof b.place_id === 'string' && typeof category === 'string') categories.set(b.place_id, category);
  }
  return categories;
}

export async function* campaignRows(
  src: RowSources,
  clientId: string,
  campaignId: string,
  withWorkflow: boolean,
): AsyncGenerator<ExportRow> {
  for await (const job of src.exports.campaignJobs(clientId, campaignId)) {
    if (withWorkflow) {
      yield* jobRows(src, clientId, job.job_id, job.display_name);
      continue;
    }
    // Only a completed job has a result; the others have no businesses yet (or never will).
    if (job.job_status !== 'completed') continue;
    const result = (await src.results.load(job.job_id)) as MapsResult;
    for (const b of result?.businesses ?? [])
      yield rowFromMaps(b, { jobId: job.job_id, campaignId, location: job.display_name });
  }
}
