import { createJobTypeActivities, STEPPED_JOB_TYPES, type ActivityDeps } from '../../activities';
import { AVAILABLE_JOB_TYPES, JOB_TYPES, priorityKeyFor } from '../../lib/job-types';
import { allJobTaskQueues, jobTaskQueue } from '../../workers/task-queues';

describe('job types', () => {
  test('the API accepts exactly the types that have a worker activity or workflow steps', () => {
    const implemented = [...Object.keys(createJobTypeActivities({} as ActivityDeps)), ...STEPPED_JOB_TYPES].sort();
    expect([...AVAILABLE_JOB_TYPES].sort()).toEqual(implemented);
    for (const t of implemented) expect(JOB_TYPES).toContain(t);
  });

  test('each spec priority gets its own Temporal priority key, higher first', () => {
    const keys = Array.from({ length: 11 }, (_, p) => priorityKeyFor(p));
    expect(keys).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
  });

  test('every type has its own task queue, plus the company-data test queue and the lead-indexing queue', () => {
    const queues = allJobTaskQueues('lj');
    expect(new Set(queues).size).toBe(JOB_TYPES.length + 2);
    expect(queues).toContain('lj-leads');
    expect(jobTaskQueue('lj', 'crawlCompanyData', { test: true })).toBe('lj-crawl-company-data-test');
    expect(jobTaskQueue('lj', 'crawlSite')).toBe('lj-crawl-site');
  });
});
