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
});
