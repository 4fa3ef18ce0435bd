import { createJobTypeActivities, type ActivityDeps } from '../../activities';
import { ALL_JOB_SPECS, AVAILABLE_JOB_TYPES, CATALOG, JOB_TYPES, priorityKeyFor } from '../../jobs';
import { MAX_JOB_DEADLINE } from '../../jobs/limits';
import { jobTaskQueue, workflowTaskQueues } from '../../jobs/queues';
import { parseConfig } from '../../lib/config';
import { activityQueueLimits } from '../../workers/main';
import { STEP_SETS, stepSetOf } from '../../workflows/steps';

describe('job catalog', () => {
  test('every type has its spec under its own name', () => {
    expect(Object.keys(CATALOG).sort()).toEqual([...JOB_TYPES].sort());
    for (const t of JOB_TYPES) expect(CATALOG[t].type).toBe(t);
  });

  test('the API accepts exactly the types that have a worker activity or a step set', () => {
    const activities = Object.keys(createJobTypeActivities({} as ActivityDeps));
    for (const t of AVAILABLE_JOB_TYPES) {
      const steps = CATALOG[t].steps;
      // A type that runs as steps names its step set (workflows/steps.ts); the others have an activity named after them.
      if (steps) expect(Object.keys(STEP_SETS)).toContain(steps);
      else expect(activities).toContain(t);
    }
    for (const t of JOB_TYPES.filter((x) => !AVAILABLE_JOB_TYPES.includes(x))) {
      expect(activities).not.toContain(t);
      expect(CATALOG[t].steps).toBeUndefined();
    }
  });

  test("a step set is named after its job type, and the name older histories carry still finds crawlCompanyData's", () => {
    const named = JOB_TYPES.filter((t) => CATALOG[t].steps).map((t) => [CATALOG[t].steps, `${t}Steps`]);
    expect(named.length).toBe(Object.keys(STEP_SETS).length);
    for (const [steps, expected] of named) expect(steps).toBe(expected);
    expect(stepSetOf('companyData')).toBe(STEP_SETS.crawlCompanyDataSteps);
    expect(stepSetOf('crawlMapsSteps')).toBe(STEP_SETS.crawlMapsSteps);
    expect(stepSetOf('toString')).toBeUndefined();
  });

  test("no job may run longer than the spec's overall 10 minutes, and every activity fits inside its job", () => {
    for (const spec of ALL_JOB_SPECS) {
      expect(spec.limits.deadline.ms).toBeLessThanOrEqual(MAX_JOB_DEADLINE.ms);
      expect(spec.limits.activity.ms).toBeLessThanOrEqual(spec.limits.deadline.ms);
      expect(spec.limits.deadline.why.length).toBeGreaterThan(10);
      expect(spec.limits.activity.why.length).toBeGreaterThan(10);
    }
  });

  test('each spec priority gets its own Temporal priority key, higher first', () => {
    const keys = Array.from({ length: 11 }, (_, p) => priorityKeyFor(p));
    expect(keys).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  test('every type has its own task queue, plus the company-data test queue, the lead-indexing, webhooks, campaigns and mail queues', () => {
    const queues = workflowTaskQueues('lj', ALL_JOB_SPECS);
    expect(new Set(queues).size).toBe(JOB_TYPES.length + 5);
    expect(queues).toContain('lj-leads');
    expect(queues).toContain('lj-webhooks');
    expect(queues).toContain('lj-campaigns');
    expect(queues).toContain('lj-mail');
    expect(jobTaskQueue('lj', CATALOG.crawlCompanyData, { test: true })).toBe('lj-crawl-company-data-test');
    expect(jobTaskQueue('lj', CATALOG.crawlSite)).toBe('lj-crawl-site');
  });

  test('the registry, Nominatim and social-profile queues carry their rate limits (SEC at 40% of its per-second limit, Nominatim at half of 1/s, social profiles 200 per hour)', () => {
    const config = parseConfig({
      MINIO_ACCESS_KEY: 'a',
      MINIO_SECRET_KEY: 'b',
      TASK_QUEUE_PREFIX: 'lj',
      SEC_REQUESTS_PER_SECOND: '10',
    });
    expect(activityQueueLimits(config)).toEqual([
      { taskQueue: 'lj-osm-nominatim', perSecond: 0.5 },
      { taskQueue: 'lj-osm-overpass', perSecond: 0.5 },
      { taskQueue: 'lj-registry-sec', perSecond: 4 },
      { taskQueue: 'lj-registry-companies-house', perSecond: 2 },
      { taskQueue: 'lj-registry-vies', perSecond: undefined },
      { taskQueue: 'lj-social-profiles', perSecond: 200 / 3600 },
    ]);
  });
});
