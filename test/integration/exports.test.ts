import { randomUUID } from 'node:crypto';
import ExcelJS from 'exceljs';
import { JobResultStore } from '../../db/repositories/job-results';
import type { IssuedCredentials } from '../../lib/credentials';
import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// Exports over HTTP on the real stack. The pipeline and the campaign workflow are built elsewhere, so
// the rows they would write (campaigns, campaign_locations, jobs, job_workflows, workflow_businesses,
// job_results) are seeded here directly, in the shapes the migration and jobs/workflow.ts fix.

let api: TestApi;
let owner: IssuedCredentials;
let c: Caller;
let other: Caller;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
  owner = await api.newClient('exporter');
  c = caller(api, bearer(owner));
  other = caller(api, bearer(await api.newClient('someone else')));
});
afterAll(async () => {
  await api.close();
});

const COLUMNS = [
  'job_id',
  'campaign_id',
  'location',
  'business_name',
  'place_id',
  'address',
  'phone',
  'website',
  'rating',
  'category',
  'domain_filtered',
  'filter_reason',
  'spidersite_status',
  'pages_crawled',
  'spiderverify_status',
  'best_email',
  'best_email_status',
  'best_email_score',
  'emails',
  'valid_emails_count',
  'phones_found',
  'proflink',
  'microblog',
  'socialnet',
  'instagram',
  'youtube',
  'tiktok',
  'pinterest',
  'github',
  'industry',
];

const WORKFLOW = {
  enabled: true,
  site: { max_pages: 10, extract_team: true, compendium: { enabled: false, cleanup_level: 'fit' } },
  verify: { enabled: true, smtp_check: true },
};
const json = (v: unknown) => JSON.stringify(v);
const db = () => api.deps.db;

async function seedCampaign(
  clientId: string,
  workflow: unknown,
  cities: string[],
): Promise<{ id: string; jobs: string[] }> {
  const id = randomUUID();
  await db()('campaigns').insert({
    id,
    client_id: clientId,
    name: 'bakeries',
    search_terms: ['bakery'],
    max_results_per_location: 20,
    workflow: workflow === null ? null : json(workflow),
    priority: 0,
    concurrency: 5,
    auto_submit: true,
    locations_total: cities.length,
    workflow_id: `campaign/${id}`,
    task_queue: 'test-campaigns',
  });
  const jobs: string[] = [];
  for (const [i, city] of cities.entries()) {
    const jobId = await seedJob(clientId, { campaignId: id, workflow, query: `bakery in ${city}` });
    jobs.push(jobId);
    await db()('campaign_locations').insert({
      campaign_id: id,
      client_id: clientId,
      location_id: 1000 + i,
      search_term: 'bakery',
      search_string: `bakery in ${city}`,
      display_name: city,
      sequence_order: i + 1,
      status: 'completed',
      job_id: jobId,
    });
  }
  return { id, jobs };
}

async function seedJob(
  clientId: string,
  o: { campaignId?: string; workflow: unknown; query?: string; status?: string; type?: string },
): Promise<string> {
  const id = randomUUID();
  const payload: Record<string, unknown> = { search_query: o.query ?? 'bakery in Leeds, GB', max_results: 20 };
  if (o.workflow) payload.workflow = o.workflow;
  await db()('jobs').insert({
    id,
    client_id: clientId,
    type: o.type ?? 'crawlMaps',
    status: o.status ?? 'completed',
    priority: 0,
    payload: json(payload),
    payload_hash: randomUUID(),
    campaign_id: o.campaignId ?? null,
    workflow_id: `job/${id}`,
    task_queue: 'test-crawl-maps',
  });
  if (o.workflow) {
    await db()('job_workflows').insert({
      job_id: id,
      client_id: clientId,
      campaign_id: o.campaignId ?? null,
      status: 'completed',
      options: json(o.workflow),
      limits: json({ site_ms: 300_000, verify_ms: 120_000, overall_ms: 600_000 }),
      deadline_at: new Date(Date.now() + 600_000),
    });
  }
  return id;
}

interface Biz {
  name: string;
  website?: string | null;
  phone?: string | null;
  filtered?: string;
  emails?: string[];
  verified?: { email: string; status: string; score: number }[];
  social?: Record<string, string | null>;
  industry?: string;
}

async function seedBusinesses(clientId: string, jobId: string, campaignId: string | null, list: Biz[]): Promise<void> {
  const rows = list.map((b, i) => ({
    job_id: jobId,
    place_id: `place-${jobId.slice(0, 8)}-${String(i).padStart(5, '0')}`,
    client_id: clientId,
    campaign_id: campaignId,
    position: i,
    business: json({
      business_name: b.name,
      business_place_id: `place-${i}`,
      business_address: `${i} High St, Leeds`,
      business_phone: b.phone ?? null,
      business_rating: 4.5,
      business_website: b.website ?? null,
    }),
    domain_filtered: b.filtered !== undefined,
    filter_reason: b.filtered ?? null,
    site_status: b.filtered !== undefined ? 'skipped' : 'completed',
    site:
      b.filtered !== undefined
        ? null
        : json({
            pages_crawled: 3,
            emails_found: b.emails ?? [],
            phones_found: ['+44 113 496 0000'],
            social_media: b.social ?? {},
            company_info: { industry: b.industry ?? null },
            team_members: [],
            compendium: null,
          }),
    verify_status: b.verified ? 'completed' : 'skipped',
    emails_verified: b.verified
      ? json(
          b.verified.map((v) => ({
            ...v,
            is_deliverable: v.status === 'valid',
            is_free_email: false,
            is_disposable: false,
            is_role_account: false,
          })),
        )
      : null,
    valid_emails_count: (b.verified ?? []).filter((v) => v.status === 'valid').length,
  }));
  for (let i = 0; i < rows.length; i += 500) await db()('workflow_businesses').insert(rows.slice(i, i + 500));
}

/** RFC 4180 reader: quoted fields with doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      record.push(field);
      field = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i++;
    } else field += ch;
  }
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

function objects(records: string[][]): Record<string, string>[] {
  const [header, ...rows] = records;
  return rows.map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ''])));
}

async function download(who: Caller, path: string): Promise<{ res: Response; body: Buffer }> {
  const res = await who.get(path);
  return { res, body: Buffer.from(await res.arrayBuffer()) };
}

describe('campaign with workflow', () => {
  let campaign: { id: string; jobs: string[] };
  beforeAll(async () => {
    campaign = await seedCampaign(owner.client_id, WORKFLOW, ['Leeds, GB', 'Zürich, CH']);
    const [leeds, zurich] = campaign.jobs as [string, string];
    await seedBusinesses(owner.client_id, leeds, campaign.id, [
      {
        name: 'Crumb & Co',
        website: 'https://crumb.example',
        phone: '+44 113 496 0001',
        emails: ['info@crumb.example', 'sales@crumb.example', 'bob@crumb.example', 'old@crumb.example'],
        verified: [
          { email: 'info@crumb.example', status: 'risky', score: 90 },
          { email: 'sales@crumb.example', status: 'valid', score: 70 },
          { email: 'bob@crumb.example', status: 'valid', score: 95 },
          { email: 'old@crumb.example', status: 'invalid', score: 99 },
        ],
        social: { socialnet: 'https://facebook.com/crumb', instagram: 'https://instagram.com/crumb' },
        industry: 'Bakery',
      },
      { name: 'Loaf on Facebook', website: 'https://facebook.com/loaf', filtered: 'social_media: facebook.com' },
      {
        name: '=HYPERLINK("http://evil.example","click")',
        website: 'https://evil.example',
        emails: ['-x@evil.example', 'first@evil.example'],
      },
    ]);
    // The maps result the pipeline started from: the category column comes from it.
    await new JobResultStore(db(), api.deps.storage).save(leeds, {
      businesses: [
        { business_name: 'Crumb & Co', place_id: `place-${leeds.slice(0, 8)}-00000`, categories: ['Bakery', 'Cafe'] },
      ],
      results_count: 1,
      provider: 'osm',
      query: 'bakery in Leeds, GB',
    });
    await seedBusinesses(owner.client_id, zurich, campaign.id, [
      {
        name: 'Bäckerei Zürich',
        website: 'https://baeckerei.example',
        emails: ['hallo@baeckerei.example'],
        verified: [{ email: 'hallo@baeckerei.example', status: 'invalid', score: 10 }],
      },
    ]);
  });

  test('csv: header, one row per business in location order, best e-mail, formulas neutralised, a file to download', async () => {
    const { res, body } = await download(c, `/api/v1/campaigns/${campaign.id}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="campaign-${campaign.id}.csv"`);
    // UTF-8 with a byte order mark, so Excel shows "Zürich".
    expect([...body.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const records = parseCsv(body.subarray(3).toString('utf8'));
    expect(records[0]).toEqual(COLUMNS);
    const rows = objects(records);
    expect(rows.map((r) => r.location)).toEqual(['Leeds, GB', 'Leeds, GB', 'Leeds, GB', 'Zürich, CH']);
    expect(rows.every((r) => r.campaign_id === campaign.id)).toBe(true);

    const crumb = rows[0] as Record<string, string>;
    expect(crumb).toMatchObject({
      job_id: campaign.jobs[0],
      business_name: 'Crumb & Co',
      website: 'https://crumb.example',
      rating: '4.5',
      category: 'Bakery',
      // A phone number keeps its + (no formula can hide in digits), so it still dials.
      phone: '+44 113 496 0001',
      domain_filtered: 'false',
      spidersite_status: 'completed',
      pages_crawled: '3',
      // Valid before risky, then the higher score; the invalid one never, however high its score.
      best_email: 'bob@crumb.example',
      best_email_status: 'valid',
      best_email_score: '95',
      emails: 'info@crumb.example; sales@crumb.example; bob@crumb.example; old@crumb.example',
      valid_emails_count: '2',
      phones_found: '+44 113 496 0000',
      socialnet: 'https://facebook.com/crumb',
      instagram: 'https://instagram.com/crumb',
      proflink: '',
      industry: 'Bakery',
    });
    expect(rows[1]).toMatchObject({
      business_name: 'Loaf on Facebook',
      category: '',
      domain_filtered: 'true',
      filter_reason: 'social_media: facebook.com',
      spidersite_status: 'skipped',
      best_email: '',
      emails: '',
    });
    // Not verified: the first address found; a cell a spreadsheet would run as a formula starts with a quote.
    expect(rows[2]).toMatchObject({
      business_name: `'=HYPERLINK("http://evil.example","click")`,
      best_email: "'-x@evil.example",
      best_email_status: '',
      best_email_score: '',
    });
    // Only invalid addresses: no best e-mail.
    expect(rows[3]).toMatchObject({
      business_name: 'Bäckerei Zürich',
      best_email: '',
      emails: 'hallo@baeckerei.example',
      valid_emails_count: '0',
    });
  });

  test('csv without the byte order mark on request', async () => {
    const { body } = await download(c, `/api/v1/campaigns/${campaign.id}/export?format=csv&bom=false`);
    expect(body.subarray(0, 6).toString('utf8')).toBe('job_id');
  });

  test('xlsx opens with a reader: header, rows, typed numbers, neutralised text', async () => {
    const { res, body } = await download(c, `/api/v1/campaigns/${campaign.id}/export?format=xlsx`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="campaign-${campaign.id}.xlsx"`);
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(body as unknown as ExcelJS.Buffer);
    const sheet = book.getWorksheet('businesses');
    if (!sheet) throw new Error('no businesses sheet');
    expect(sheet.rowCount).toBe(5);
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    expect(header).toEqual(COLUMNS);
    const col = (name: string) => COLUMNS.indexOf(name) + 1;
    const crumb = sheet.getRow(2);
    expect(crumb.getCell(col('rating')).value).toBe(4.5);
    expect(crumb.getCell(col('best_email_score')).value).toBe(95);
    expect(crumb.getCell(col('domain_filtered')).value).toBe(false);
    expect(crumb.getCell(col('best_email')).value).toBe('bob@crumb.example');
    const evil = sheet.getRow(4).getCell(col('business_name'));
    // A text cell, never a formula, and quoted as in csv.
    expect(evil.type).toBe(ExcelJS.ValueType.String);
    expect(evil.value).toBe(`'=HYPERLINK("http://evil.example","click")`);
    expect(sheet.getRow(5).getCell(col('location')).value).toBe('Zürich, CH');
  });

  test('ndjson: one JSON object per line, lists as arrays, empty values null', async () => {
    const { res, body } = await download(c, `/api/v1/campaigns/${campaign.id}/export?format=ndjson`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const text = body.toString('utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(4);
    expect(Object.keys(lines[0] ?? {})).toEqual(COLUMNS);
    expect(lines[0]).toMatchObject({
      best_email: 'bob@crumb.example',
      best_email_score: 95,
      rating: 4.5,
      domain_filtered: false,
      emails: ['info@crumb.example', 'sales@crumb.example', 'bob@crumb.example', 'old@crumb.example'],
    });
    expect(lines[1]).toMatchObject({ domain_filtered: true, best_email: null, emails: [], pages_crawled: 0 });
    // Data for programs: no spreadsheet quoting.
    expect(lines[2]?.business_name).toBe('=HYPERLINK("http://evil.example","click")');
  });

  test("one location job's export: the job's businesses with their location", async () => {
    const { res, body } = await download(c, `/api/v1/jobs/${campaign.jobs[1]}/workflow-results/export?format=ndjson`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="job-${campaign.jobs[1]}.ndjson"`);
    const lines = body
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.business_name, l.location, l.campaign_id])).toEqual([
      ['Bäckerei Zürich', 'Zürich, CH', campaign.id],
    ]);
  });

  test("another client's campaign and job are not found", async () => {
    const res = await other.get(`/api/v1/campaigns/${campaign.id}/export`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'campaign not found' });
    const job = await other.get(`/api/v1/jobs/${campaign.jobs[0]}/workflow-results/export`);
    expect(job.status).toBe(404);
    expect(await job.json()).toEqual({ detail: 'job not found' });
  });
});

describe('standalone job with workflow', () => {
  test('businesses in maps order across many pages, without campaign or location', async () => {
    const jobId = await seedJob(owner.client_id, { workflow: WORKFLOW });
    // More than one page of the keyset reads (500 rows a query).
    const many = Array.from({ length: 1203 }, (_, i) => ({
      name: `Bakery ${i}`,
      website: `https://b${i}.example`,
      emails: [`hi@b${i}.example`],
    }));
    await seedBusinesses(owner.client_id, jobId, null, many);
    const { res, body } = await download(c, `/api/v1/jobs/${jobId}/workflow-results/export?format=csv&bom=false`);
    expect(res.status).toBe(200);
    const rows = objects(parseCsv(body.toString('utf8')));
    expect(rows.map((r) => r.business_name)).toEqual(many.map((b) => b.name));
    expect(rows[1202]).toMatchObject({ job_id: jobId, campaign_id: '', location: '', best_email: 'hi@b1202.example' });
  });

  test('a job without workflow is refused with 400; malformed ids 400; unknown 404', async () => {
    const plain = await seedJob(owner.client_id, { workflow: null });
    let res = await c.get(`/api/v1/jobs/${plain}/workflow-results/export`);
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      detail:
        'this job was not submitted with a workflow: workflow results exist only for crawlMaps jobs submitted with workflow (enabled)',
    });
    res = await c.get('/api/v1/jobs/not-a-uuid/workflow-results/export?format=xlsx');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: 'invalid job id format, expected UUID' });
    res = await c.get(`/api/v1/jobs/${randomUUID()}/workflow-results/export`);
    expect(res.status).toBe(404);
    res = await c.get('/api/v1/campaigns/nope/export');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ detail: 'invalid campaign id format, expected UUID' });
    res = await c.get(`/api/v1/campaigns/${randomUUID()}/export?format=ndjson`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'campaign not found' });
  });

  test('an unknown format is a 422 naming the three export formats; yaml is not one of them', async () => {
    for (const format of ['pdf', 'yaml']) {
      const res = await c.get(`/api/v1/campaigns/${randomUUID()}/export?format=${format}`);
      expect(res.status).toBe(422);
      const body = (await res.json()) as { detail: { loc: string[]; msg: string }[] };
      expect(body.detail[0]?.loc).toEqual(['query', 'format']);
      expect(body.detail[0]?.msg).toMatch(/csv.*xlsx.*ndjson/);
    }
  });

  test('a client hanging up mid-download leaves the service answering', async () => {
    const jobId = await seedJob(owner.client_id, { workflow: WORKFLOW });
    await seedBusinesses(
      owner.client_id,
      jobId,
      null,
      Array.from({ length: 1500 }, (_, i) => ({ name: `Shop ${i}`, emails: [`a${i}@s.example`] })),
    );
    const abort = new AbortController();
    const res = await fetch(`${api.url}/api/v1/jobs/${jobId}/workflow-results/export?format=xlsx`, {
      headers: { authorization: c.auth },
      signal: abort.signal,
    });
    const reader = res.body?.getReader();
    await reader?.read();
    abort.abort();
    await reader?.cancel().catch(() => undefined);
    const again = await download(c, `/api/v1/jobs/${jobId}/workflow-results/export?format=ndjson`);
    expect(again.body.toString('utf8').trimEnd().split('\n')).toHaveLength(1500);
  });
});

describe('stored rows of odd shape', () => {
  test('an entry that is not what the pipeline writes is read as empty, not a broken download', async () => {
    const jobId = await seedJob(owner.client_id, { workflow: WORKFLOW });
    await db()('workflow_businesses').insert({
      job_id: jobId,
      place_id: 'odd-1',
      client_id: owner.client_id,
      campaign_id: null,
      position: 0,
      business: json({ business_name: 42 }),
      site_status: 'completed',
      site: json({ emails_found: 'not a list', social_media: ['x'], pages_crawled: '3' }),
      verify_status: 'completed',
      emails_verified: json([null, 'x', { email: 'ok@odd.example', status: 'valid' }]),
    });
    const { res, body } = await download(c, `/api/v1/jobs/${jobId}/workflow-results/export?format=ndjson`);
    expect(res.status).toBe(200);
    expect(JSON.parse(body.toString('utf8'))).toMatchObject({
      place_id: 'odd-1',
      business_name: null,
      best_email: 'ok@odd.example',
      best_email_score: 0,
      emails: ['ok@odd.example'],
      pages_crawled: 0,
    });
  });
});

describe('OpenAPI', () => {
  test('documents both exports with their own format parameter and the columns', async () => {
    const doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { description: string; parameters: { name: string; schema: { enum?: string[] } }[] }>
      >;
    };
    for (const path of ['/api/v1/campaigns/{campaign_id}/export', '/api/v1/jobs/{job_id}/workflow-results/export']) {
      const op = doc.paths[path]?.get;
      const formats = op?.parameters.filter((p) => p.name === 'format') ?? [];
      expect(formats.map((p) => p.schema.enum)).toEqual([['csv', 'xlsx', 'ndjson']]);
      for (const column of COLUMNS) expect(op?.description).toContain(`${column} (`);
    }
  });
});

describe('campaign without workflow', () => {
  test("rows come from each completed location job's maps result; stage columns empty", async () => {
    const campaign = await seedCampaign(owner.client_id, null, ['Leeds, GB', 'York, GB', 'Hull, GB']);
    const store = new JobResultStore(db(), api.deps.storage);
    const business = (name: string, place: string) => ({
      business_name: name,
      name,
      address: '1 Main St',
      phone: '+44 1904 000000',
      website: 'https://x.example',
      rating: 4.1,
      categories: ['Bakery', 'Cafe'],
      place_id: place,
    });
    await store.save(campaign.jobs[0] as string, {
      businesses: [business('Leeds Loaf', 'p-leeds-1'), business('@Leeds Bun', 'p-leeds-2')],
      results_count: 2,
      provider: 'osm',
      query: 'bakery in Leeds, GB',
    });
    await store.save(campaign.jobs[2] as string, {
      businesses: [business('Hull Bakes', 'p-hull-1')],
      results_count: 1,
      provider: 'osm',
      query: 'bakery in Hull, GB',
    });
    // York's job failed: no result, no rows.
    await db()('jobs').where({ id: campaign.jobs[1] }).update({ status: 'failed' });

    const { res, body } = await download(c, `/api/v1/campaigns/${campaign.id}/export?bom=false`);
    expect(res.status).toBe(200);
    const rows = objects(parseCsv(body.toString('utf8')));
    expect(rows.map((r) => [r.business_name, r.location, r.place_id])).toEqual([
      ['Leeds Loaf', 'Leeds, GB', 'p-leeds-1'],
      ["'@Leeds Bun", 'Leeds, GB', 'p-leeds-2'],
      ['Hull Bakes', 'Hull, GB', 'p-hull-1'],
    ]);
    expect(rows[0]).toMatchObject({
      category: 'Bakery',
      rating: '4.1',
      phone: '+44 1904 000000',
      domain_filtered: '',
      spidersite_status: '',
      best_email: '',
      emails: '',
      pages_crawled: '',
    });
  });
});
