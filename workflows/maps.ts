import { ActivityCancellationType, ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { JobActivityOutput } from '../activities/deps';
import type { MapsActivities } from '../activities/maps/crawl-maps';
import type { NominatimPlace } from '../activities/maps/nominatim';
import type { JobStepsInput } from './step-input';
import { jobActivities } from './worker-loss';

// Nominatim answers at most 40 places per request (activities/maps/nominatim.ts NOMINATIM_PAGE).
const NOMINATIM_PAGE = 40;

// Planning reads the payload and the worker's config only.
const planning = proxyActivities<MapsActivities>({
  startToCloseTimeout: '30s', // no I/O; anything longer is a stuck worker
  retry: { initialInterval: '500ms', maximumInterval: '10s', maximumAttempts: 10 },
});

/** The job's own activities (Google's whole crawl, the OSM result), with the type's limits. */
const onJobQueue = (activityMs: number, heartbeatMs?: number) =>
  jobActivities<MapsActivities>(activityMs, { heartbeatMs }); // every request and every half second heartbeats

/** One OSM request per activity, on its host's queue, whose dispatch limit holds for all workers together. */
const onOsmQueue = (taskQueue: string, startToCloseTimeout: '30s' | '5m' = '30s') =>
  proxyActivities<MapsActivities>({
    taskQueue,
    // Nominatim: one HTTP request, the outbound client gives up after 20 s. Overpass: up to three
    // tries of one query with [timeout:] 25, 60 and 120 s and pauses (activities/maps/overpass.ts).
    startToCloseTimeout,
    heartbeatTimeout: '10s',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    // Waiting for the queue's 1-per-second slot behind other jobs is expected.
    scheduleToCloseTimeout: '8m',
    retry: { initialInterval: '2s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 4 },
  });

/**
 * crawlMaps. Google Places: one activity on the job's queue does the whole crawl (its API has no
 * shared rate to keep). OpenStreetMap: a category in a named area ("bakery in Leeds") is one
 * Overpass query on the Overpass queue; other searches are Nominatim requests on the Nominatim
 * queue (each host 1 request/s for all workers together), paged with exclude_place_ids up to
 * max_results; then one activity on the job's queue turns the places into the result.
 */
export async function crawlMapsSteps(input: JobStepsInput): Promise<JobActivityOutput> {
  const plan = await planning.planMaps({ payload: input.payload });
  const job = onJobQueue(input.limits.activityMs, input.limits.heartbeatMs);
  if (plan.provider === 'google_places') return job.crawlMapsGoogle({ jobId: input.jobId, payload: input.payload });

  const queue = (key: 'nominatim' | 'overpass') => {
    const name = input.queues[key];
    if (!name) throw ApplicationFailure.nonRetryable(`crawlMaps started without the ${key} queue`, 'InvalidInput');
    return onOsmQueue(name, key === 'overpass' ? '5m' : '30s');
  };
  let places: NominatimPlace[];
  if (plan.kind === 'overpass') {
    places = await queue('overpass').queryOverpass({ ql: plan.ql, tag: plan.tag });
  } else if (plan.kind === 'lookup') {
    places = await queue('nominatim').lookupNominatim({ osmIds: plan.osmIds, language: plan.language });
  } else {
    places = [];
    for (;;) {
      const want = Math.min(NOMINATIM_PAGE, plan.maxResults - places.length);
      const page = await queue('nominatim').searchNominatim({
        q: plan.q,
        limit: want,
        excludePlaceIds: places.map((p) => p.place_id),
        language: plan.language,
        countryCode: plan.countryCode,
      });
      places.push(...page);
      if (page.length < want || places.length >= plan.maxResults) break;
    }
  }
  return job.saveOsmMaps({ jobId: input.jobId, payload: input.payload, places });
}
