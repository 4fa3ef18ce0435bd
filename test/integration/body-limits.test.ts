import { bearer, startTestApi, type TestApi } from '../support/api';
import { caller, type Caller } from '../support/jobs';

// Bodies that are small on the wire but huge or deep once parsed (issue 10), sent to the IDAP
// import, which stores whatever data it is given.
let api: TestApi;
beforeAll(async () => {
  api = await startTestApi({ RATE_LIMIT_ENABLED: 'false' });
});
afterAll(() => api.close());

let n = 0;
const uniq = (prefix: string) =>
  `${prefix}${Date.now().toString(36)}${(n++).toString(36)}${Math.random().toString(36).slice(2, 6)}`;

/** A client of its own, so "nothing was stored" can be read from its resource count. */
async function newCaller(): Promise<{ c: Caller; clientId: string }> {
  const creds = await api.newClient(uniq('limits-'));
  return { c: caller(api, bearer(creds)), clientId: creds.client_id };
}
const stored = async (clientId: string) =>
  Number(
    ((await api.deps.db('idap_resources').where({ client_id: clientId }).count({ n: '*' })) as { n: string }[])[0]?.n,
  );

/**
 * `levels` anchored lists, each holding `fanout` aliases of the one before (the first holds `leaf`,
 * YAML text): the last stands for fanout^(levels-1) copies of the first, in a few hundred bytes.
 */
function laughs(levels: number, fanout: number, leaf: string): string {
  const names = Array.from({ length: levels }, (_, i) => `l${i}`);
  const lines = names.map(
    (name, i) =>
      `      ${name}: &${name} [${Array.from({ length: fanout }, () => (i === 0 ? leaf : `*${names[i - 1]}`)).join(', ')}]`,
  );
  return `records:\n  - data:\n      domain: ${uniq('bomb-')}.test\n${lines.join('\n')}\n`;
}

// A server that expands these takes minutes and gigabytes; refusing them takes milliseconds. The
// 5 s bound below is one only that defect (expanding before counting) crosses, not a timing: the
// request itself is a few milliseconds even on a loaded machine.
async function timed(send: () => Promise<Response>): Promise<{ res: Response; ms: number }> {
  const started = Date.now();
  const res = await send();
  await res.clone().text();
  return { res, ms: Date.now() - started };
}

describe('request bodies that expand (YAML aliases) or nest too deep', () => {
  test('a billion-laughs YAML body (9 levels of 9 aliases, 387 million strings) is 422 at once and stores nothing', async () => {
    const { c, clientId } = await newCaller();
    const body = laughs(9, 9, 'lol');
    expect(body.length).toBeLessThan(1024);
    const { res, ms } = await timed(() => c.post('/api/v1/idap/domains/import', body, 'text/yaml'));
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'yaml_too_many_aliases', loc: ['body'], msg: 'YAML body uses more than 50 aliases' }],
    });
    expect(ms).toBeLessThan(5000); // defect-only bound: 387 million strings expanded take minutes
    expect(await stored(clientId)).toBe(0);
  });

  test('aliases within the alias budget that expand past the body limit are 413 at once and store nothing', async () => {
    const { c, clientId } = await newCaller();
    // 44 aliases; the last list stands for 4^11 (4.2 million) lists of four nulls.
    const body = laughs(12, 4, '~');
    const { res, ms } = await timed(() => c.post('/api/v1/idap/domains/import', body, 'application/yaml'));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      detail:
        'request body is too large once YAML aliases are expanded: more than 2097152 values (the limit of a 2mb body)',
    });
    expect(ms).toBeLessThan(5000); // defect-only bound: expanding the 4^11 lists before counting them takes seconds and gigabytes
    expect(await stored(clientId)).toBe(0);
  });

  test('long strings repeated through aliases count as text: past 2mb it is 413', async () => {
    const { c, clientId } = await newCaller();
    // 40 aliases standing for 10^4 copies of a 1,000-character string: 10 MB of text.
    const res = await c.post('/api/v1/idap/domains/import', laughs(5, 10, `"${'x'.repeat(1000)}"`), 'text/yaml');
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      detail:
        'request body is too large once YAML aliases are expanded: more than 2mb of text (the limit of a 2mb body)',
    });
    expect(await stored(clientId)).toBe(0);
  });

  test('a JSON body nested 10,000 levels deep is 422 and stores nothing', async () => {
    const { c, clientId } = await newCaller();
    const deep = `${'['.repeat(10000)}${']'.repeat(10000)}`;
    const res = await c.post(
      '/api/v1/idap/domains/import',
      `{"records":[{"data":{"domain":"${uniq('deep-')}.test","x":${deep}}}]}`,
    );
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({
      detail: [{ type: 'too_deep', loc: ['body'], msg: 'body nests deeper than 64 levels' }],
    });
    expect(await stored(clientId)).toBe(0);
  });

  test('a YAML body over 256kb is 413 naming the YAML limit and stores nothing; the same records as JSON are imported', async () => {
    // js-yaml held the API's thread 1.5 s on 2 MB of YAML; JSON is read about five times as fast.
    const { c, clientId } = await newCaller();
    const records = Array.from({ length: 1_000 }, (_, i) => ({
      data: { domain: `${uniq('y-')}-${i}.test`, note: 'x'.repeat(300) },
    }));
    const yamlBody = `records:\n${records.map((r) => `  - data: {domain: ${r.data.domain}, note: ${r.data.note}}`).join('\n')}\n`;
    expect(yamlBody.length).toBeGreaterThan(256 * 1024);
    const res = await c.post('/api/v1/idap/domains/import', yamlBody, 'application/yaml');
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      detail: 'request body is larger than 256kb (the limit of a YAML body; send larger bodies as JSON)',
    });
    expect(await stored(clientId)).toBe(0);
    const json = await c.post('/api/v1/idap/domains/import', JSON.stringify({ records }));
    expect(json.status).toBe(200);
    expect(await stored(clientId)).toBe(1_000);
  });

  test('a normal YAML body with a couple of aliases is imported with the aliases expanded', async () => {
    const { c, clientId } = await newCaller();
    const [a, b] = [uniq('a-'), uniq('b-')];
    const body = [
      'records:',
      `  - data: {domain: ${a}.test, owner: &owner {name: Acme Ltd, country: GB}}`,
      '    flags: &flags [qualified, priority]',
      `  - data: {domain: ${b}.test, owner: *owner}`,
      '    flags: *flags',
      '',
    ].join('\n');
    const res = await c.post('/api/v1/idap/domains/import', body, 'text/yaml');
    expect(res.status).toBe(200);
    const imported = await c.json<{ created: number; items: { resource_id: string }[] }>(res);
    expect(imported.created).toBe(2);
    expect(await stored(clientId)).toBe(2);
    const second = await c.json<{ data: Record<string, unknown>; flags: string[] }>(
      await c.get(`/api/v1/idap/domains/${imported.items[1]?.resource_id}`),
    );
    expect(second.data).toMatchObject({ domain: `${b}.test`, owner: { name: 'Acme Ltd', country: 'GB' } });
    expect([...second.flags].sort()).toEqual(['priority', 'qualified']);
  });
});
