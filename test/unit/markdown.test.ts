import { toMarkdown } from '../../lib/markdown';

describe('Markdown rendering', () => {
  test('lists of objects become tables with the union of their keys', () => {
    const md = toMarkdown({ total: 2, jobs: [{ job_id: 'a', status: 'queued' }, { job_id: 'b', error: 'x|y' }] });
    expect(md).toContain('| field | value |\n| --- | --- |\n| total | 2 |');
    expect(md).toContain('# jobs\n\n| job_id | status | error |\n| --- | --- | --- |\n| a | queued |  |\n| b |  | x\\|y |');
  });

  test('lists of strings become bullets, nested objects sub-sections, newlines stay in their cell', () => {
    const md = toMarkdown({ emails: ['a@x.io'], company_info: { name: 'Acme', address: 'l1\nl2' } });
    expect(md).toContain('# emails\n\n- a@x.io');
    expect(md).toContain('# company_info\n\n| field | value |\n| --- | --- |\n| name | Acme |\n| address | l1<br>l2 |');
  });

  test('stored HTML and link syntax read as text: no tag or link reaches a renderer', () => {
    // An inbound mail's body_html came out as live markup: <img src=x onerror=alert(1)>.
    const md = toMarkdown({ body_html: '<img src=x onerror=alert(1)><script>alert(2)</script>', note: '[win](javascript:alert(3)) & more', items: ['<b>x</b>'], '<h1>key</h1>': { a: 1 } });
    expect(md).toContain('| body_html | &lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt; |');
    expect(md).toContain('| note | \\[win\\](javascript:alert(3)) &amp; more |');
    expect(md).toContain('- &lt;b&gt;x&lt;/b&gt;');
    expect(md).toContain('# &lt;h1&gt;key&lt;/h1&gt;');
    // A table's column names are keys of the data too.
    expect(toMarkdown({ rows: [{ '<i>col</i>': 1 }] })).toContain('| &lt;i&gt;col&lt;/i&gt; |');
    expect(md.replace(/<br>/g, '')).not.toMatch(/<[a-z/]/i);
  });
});
