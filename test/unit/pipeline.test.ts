import { buildWorkflowResults } from '../../api/workflow-results';
import { plannedBusinesses, siteOrigin } from '../../activities/pipeline/pipeline';
import { pipelineStatus, type JobWorkflowRow, type WorkflowBusinessRow } from '../../db/repositories/job-workflows';
import { workflowOptions, workflowResults } from '../../jobs/workflow';
import { filterReason } from '../../lib/directory-domains';

describe('domain filter', () => {
  test.each([
    ['https://www.facebook.com/leedsbakery', 'social_media: facebook.com'],
    ['https://m.facebook.com/pages/x', 'social_media: facebook.com'],
    ['http://instagram.com/bakery', 'social_media: instagram.com'],
    ['https://www.yelp.com/biz/bakery-leeds', 'review_site: yelp.com'],
    ['https://www.tripadvisor.co.uk/Restaurant_Review', 'review_site: tripadvisor.co.uk'],
    ['https://www.yellowpages.com/leeds/bakery', 'directory: yellowpages.com'],
    ['https://shop.etsy.com/x', 'marketplace: etsy.com'],
  ])('%s is filtered as %s', (url, reason) => {
    expect(filterReason(url)).toBe(reason);
  });

  test.each([
    'https://www.leedsbakery.co.uk/',
    'https://notfacebook.com/',
    'https://facebook.example/',
    'http://127.0.0.1:8080/',
    null,
    'not a url at all',
  ])('%s is not filtered', (url) => {
    expect(filterReason(url)).toBeNull();
  });
});

describe('site of a business', () => {
  test('the origin keeps scheme, host and port: two ports are two sites', () => {
    expect(siteOrigin('http://127.0.0.1:8081/?site=a')).toBe('http://127.0.0.1:8081');
    expect(siteOrigin('http://127.0.0.1:8082/about')).toBe('http://127.0.0.1:8082');
    expect(siteOrigin('https://www.a.co.uk/x')).toBe('https://www.a.co.uk');
    expect(siteOrigin('mailto:a@b.c')).toBeNull();
  });

  test('maps businesses become rows in maps order, one per place, filtered and website-less ones skipped', () => {
    const rows = plannedBusinesses(
      {
        businesses: [
          {
            place_id: 'p1',
            business_name: 'A',
            website: 'https://a.example/',
            address: '1 St',
            phone: '0113',
            rating: 4.5,
          },
          { place_id: 'p2', business_name: 'B', website: 'https://www.facebook.com/b' },
          { place_id: 'p3', business_name: 'C', website: null },
          { place_id: 'p1', business_name: 'A again', website: 'https://a.example/' },
          { business_name: 'no place id', website: 'https://d.example/' },
        ],
      },
      workflowOptions.parse({ verify: { enabled: false } }),
    );
    expect(
      rows.map((r) => [
        r.place_id,
        r.position,
        r.site_origin,
        r.domain_filtered,
        r.filter_reason,
        r.site_status,
        r.verify_status,
      ]),
    ).toEqual([
      ['p1', 0, 'https://a.example', false, null, 'pending', 'skipped'],
      ['p2', 1, null, true, 'social_media: facebook.com', 'skipped', 'skipped'],
      ['p3', 2, null, false, null, 'skipped', 'skipped'],
    ]);
    expect(rows[0]?.business).toEqual({
      business_name: 'A',
      business_place_id: 'p1',
      business_address: '1 St',
      business_phone: '0113',
      business_rating: 4.5,
      business_website: 'https://a.example/',
    });
  });
});

describe('workflow status (spec §4.3)', () => {
  test('a timed-out stage makes partial, else a failed one completed_with_errors, else completed', () => {
    expect(pipelineStatus(['completed', 'failed', 'timed_out'])).toBe('partial');
    expect(pipelineStatus(['completed', 'failed', 'skipped'])).toBe('completed_with_errors');
    expect(pipelineStatus(['completed', 'skipped'])).toBe('completed');
    expect(pipelineStatus([])).toBe('completed');
  });

  const job = {
    id: '00000000-0000-4000-8000-000000000001',
    status: 'completed' as const,
    campaign_id: null,
    started_at: new Date('2026-11-22T10:00:00Z'),
    completed_at: null,
    error_message: null,
  };
  const wf = (status: JobWorkflowRow['status']): JobWorkflowRow => ({
    job_id: job.id,
    client_id: 'cli',
    campaign_id: null,
    status,
    options: {},
    limits: { siteMs: 1, verifyMs: 1, overallMs: 1 },
    site_timed_out: status === 'partial',
    verify_timed_out: false,
    error_message: null,
    started_at: new Date('2026-11-22T10:00:10Z'),
    deadline_at: new Date('2026-11-22T10:10:10Z'),
    completed_at: status === 'processing' ? null : new Date('2026-11-22T10:01:00Z'),
  });
  const row = (
    placeId: string,
    site: WorkflowBusinessRow['site_status'],
    verify: WorkflowBusinessRow['verify_status'],
    emails: string[] = [],
    valid = 0,
  ): WorkflowBusinessRow => ({
    job_id: job.id,
    place_id: placeId,
    client_id: 'cli',
    campaign_id: null,
    position: 0,
    site_origin: null,
    domain_filtered: false,
    filter_reason: null,
    business: {
      business_name: placeId,
      business_place_id: placeId,
      business_address: null,
      business_phone: null,
      business_rating: null,
      business_website: `https://${placeId}.example/`,
    },
    site_status: site,
    site:
      site === 'completed'
        ? {
            pages_crawled: 1,
            emails_found: emails,
            phones_found: [],
            social_media: {},
            company_info: {},
            team_members: [],
            compendium: null,
          }
        : null,
    site_error: null,
    verify_status: verify,
    emails_verified: null,
    valid_emails_count: valid,
    verify_error: null,
  });
  const now = new Date('2026-11-22T10:05:00Z');

  test.each([
    [
      'all processed',
      wf('completed'),
      [row('a', 'completed', 'completed', ['x@a.example'], 1)],
      true,
      true,
      'completed',
    ],
    [
      'some stage failed',
      wf('completed_with_errors'),
      [row('a', 'failed', 'skipped')],
      true,
      true,
      'completed_with_errors',
    ],
    ['zero businesses', wf('completed'), [], true, false, 'completed'],
    ['timeout with data', wf('partial'), [row('a', 'timed_out', 'skipped')], true, true, 'partial'],
    ['still processing', wf('processing'), [row('a', 'processing', 'pending')], false, false, 'processing'],
  ] as const)('%s', (_name, pipeline, rows, success, hasResults, status) => {
    const body = buildWorkflowResults(job, pipeline, [...rows], now);
    expect(() => workflowResults.strict().parse(body)).not.toThrow();
    expect(body).toMatchObject({ success, has_results: hasResults, status });
    expect(body.progress === null).toBe(status !== 'processing');
  });

  test('before the pipeline starts the status follows the maps job; a failed maps job is failed', () => {
    expect(buildWorkflowResults({ ...job, status: 'queued', started_at: null }, undefined, [], now)).toMatchObject({
      status: 'queued',
      success: false,
      has_results: false,
      processing_time_seconds: null,
    });
    expect(buildWorkflowResults({ ...job, status: 'processing' }, undefined, [], now)).toMatchObject({
      status: 'processing',
      progress: { stage: 'maps', percent: 0 },
      processing_time_seconds: 300,
    });
    expect(buildWorkflowResults({ ...job, status: 'completed' }, undefined, [], now)).toMatchObject({
      status: 'processing',
      success: false,
    });
    expect(
      buildWorkflowResults({ ...job, status: 'failed', error_message: 'business not found: x' }, undefined, [], now),
    ).toMatchObject({ status: 'failed', success: false, has_results: false, error_message: 'business not found: x' });
  });

  test('a maps job that failed or was cancelled before its pipeline: the processing time stops at its end', () => {
    // It ran on to "now": 18.8 s, then 146 s, then 150.9 s for a job that had failed after 18.5 s.
    const ended = new Date('2026-11-22T10:00:18.5Z');
    for (const status of ['failed', 'cancelled'] as const) {
      const body = buildWorkflowResults({ ...job, status, completed_at: ended }, undefined, [], now);
      expect(body).toMatchObject({ status: 'failed', processing_time_seconds: 18.5 });
    }
  });

  test("progress counts finished stages; processing time runs to the pipeline's end", () => {
    const body = buildWorkflowResults(
      job,
      wf('processing'),
      [row('a', 'completed', 'pending', ['x@a.example']), row('b', 'pending', 'pending')],
      now,
    );
    expect(body.progress).toEqual({
      stage: 'site',
      businesses_total: 2,
      spidersite_done: 1,
      spiderverify_done: 0,
      percent: 25,
    });
    expect(body.total_emails_found).toBe(1);
    expect(buildWorkflowResults(job, wf('completed'), [], now).processing_time_seconds).toBe(60);
  });
});
