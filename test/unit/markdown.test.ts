import { loadHtml } from '../../activities/site/extract/dom';
import { pageMarkdown, splitBlocks } from '../../activities/site/compendium';
import { HtmlTooDeepError } from '../../lib/dom-markdown';
import { toMarkdown } from '../../lib/markdown';
import { htmlToText } from '../../lib/mail/templates';

describe('Markdown rendering', () => {
  test('lists of objects become tables with the union of their keys', () => {
    const md = toMarkdown({
      total: 2,
      jobs: [
        { job_id: 'a', status: 'queued' },
        { job_id: 'b', error: 'x|y' },
      ],
    });
    expect(md).toContain('| field | value |\n| --- | --- |\n| total | 2 |');
    expect(md).toContain(
      '# jobs\n\n| job_id | status | error |\n| --- | --- | --- |\n| a | queued |  |\n| b |  | x\\|y |',
    );
  });

  test('lists of strings become bullets, nested objects sub-sections, newlines stay in their cell', () => {
    const md = toMarkdown({ emails: ['a@x.io'], company_info: { name: 'Acme', address: 'l1\nl2' } });
    expect(md).toContain('# emails\n\n- a@x.io');
    expect(md).toContain('# company_info\n\n| field | value |\n| --- | --- |\n| name | Acme |\n| address | l1<br>l2 |');
  });

  test('stored HTML and link syntax read as text: no tag or link reaches a renderer', () => {
    // An inbound mail's body_html came out as live markup: <img src=x onerror=alert(1)>.
    const md = toMarkdown({
      body_html: '<img src=x onerror=alert(1)><script>alert(2)</script>',
      note: '[win](javascript:alert(3)) & more',
      items: ['<b>x</b>'],
      '<h1>key</h1>': { a: 1 },
    });
    expect(md).toContain('| body_html | &lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt; |');
    expect(md).toContain('| note | \\[win\\](javascript:alert(3)) &amp; more |');
    expect(md).toContain('- &lt;b&gt;x&lt;/b&gt;');
    expect(md).toContain('# &lt;h1&gt;key&lt;/h1&gt;');
    // A table's column names are keys of the data too.
    expect(toMarkdown({ rows: [{ '<i>col</i>': 1 }] })).toContain('| &lt;i&gt;col&lt;/i&gt; |');
    expect(md.replace(/<br>/g, '')).not.toMatch(/<[a-z/]/i);
  });
});

describe('HTML to Markdown', () => {
  // Pages and mail bodies with long whitespace runs once took turndown seconds to minutes of
  // synchronous work (quadratic in the run): 160k spaces in a <pre> took ~21 s. Runs that span
  // elements (<br>s, &nbsp; in many inline elements) or end an inline element's text did too.
  // Each input below took 14 s or more that way; linear, each takes well under the bound (a
  // loaded machine's margin, not a benchmark: timings belong to bench/).
  const BOUND_MS = 5000;
  const hostile: [string, string][] = [
    ['160k spaces in a <pre>', `<pre>${' '.repeat(160_000)}x</pre>`],
    ['160k &nbsp; in a paragraph', `<p>${'&nbsp;'.repeat(160_000)}x</p>`],
    ['160k &#160; and &#xA0;', `<p>${'&#160;&#xA0;'.repeat(80_000)}x</p>`],
    ['160k ideographic spaces', `<p>${'\u3000'.repeat(160_000)}x</p>`],
    ['50k <br>', `<p>${'<br>'.repeat(50_000)}x</p>`],
    ['120k &nbsp; in 15k <i>', `<p>${`<i>${'&nbsp;'.repeat(8)}</i>`.repeat(15_000)}x</p>`],
    [
      '160k spaces then &nbsp; at the end of an inline element',
      `<span><pre>x${' '.repeat(160_000)}&nbsp;</pre></span><p>x</p>`,
    ],
  ];
  const timed = <T>(f: () => T): [T, number] => {
    const started = performance.now();
    const value = f();
    return [value, performance.now() - started];
  };

  test.each(hostile)('a mail body of %s converts at once and keeps its text', (_, html) => {
    const [text, ms] = timed(() => htmlToText(html));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(text).toMatch(/x$/);
  });

  test.each(hostile)('a crawled page of %s converts at once and keeps its text', (_, html) => {
    for (const level of ['fit', 'raw'] as const) {
      const [blocks, ms] = timed(() => pageMarkdown(loadHtml(`<html><body><main>${html}</main></body></html>`), level));
      expect(ms).toBeLessThan(BOUND_MS);
      // (A <pre> is a code block: its text ends before the closing fence.)
      expect(blocks.join('\n')).toMatch(/x(\n```)?$/);
    }
  });

  test('splitBlocks trims spaces at line ends without slowing down on a long run inside a line', () => {
    expect(splitBlocks('a  \nb\t\n\n  c \n\n \n\n')).toEqual(['a\nb', 'c']);
    const [blocks, ms] = timed(() => splitBlocks(`a${' '.repeat(200_000)}b\n`));
    expect(ms).toBeLessThan(BOUND_MS);
    expect(blocks).toEqual([`a${' '.repeat(200_000)}b`]);
  });

  test('HTML nested deeper than MAX_HTML_DEPTH is refused at once (a mail) or read as text (a page); unclosed <p> and <li> nest nothing', () => {
    expect(htmlToText(`<script>${'<div>'.repeat(5000)}</script><style>${'<b>'.repeat(5000)}</style><i>x</i>`)).toBe(
      '_x_',
    );
    expect(htmlToText(`${'<p>'.repeat(5000)}x`)).toBe('x');
    expect(htmlToText(`${'<div>'.repeat(900)}x${'</div>'.repeat(900)}`)).toBe('x');
    const deep = `${'<div>'.repeat(30_000)}deep text${'</div>'.repeat(30_000)}`;
    const [thrown, ms] = timed(() => {
      try {
        htmlToText(deep);
        return undefined;
      } catch (err) {
        return err;
      }
    });
    expect(thrown).toBeInstanceOf(HtmlTooDeepError);
    // Before: about 23 s to parse, then a stack overflow.
    expect(ms).toBeLessThan(BOUND_MS);
    // A page deeper than that (but not so deep that the crawler cannot read it at all) keeps its text.
    const page = `${'<div>'.repeat(1500)}deep text${'</div>'.repeat(1500)}`;
    expect(pageMarkdown(loadHtml(`<html><body><main>${page}</main></body></html>`), 'fit')).toEqual(['deep text']);
  });

  test("a mail body's head, styles and scripts are not its text", () => {
    // The text part once began with the page title and the CSS, and ended with the script.
    const html =
      '<html><head><title>Offer</title><style>p{color:red}</style></head><body><p>Hi <b>Ann</b></p><script>var x = 1</script><noscript>Enable JS</noscript></body></html>';
    expect(htmlToText(html)).toBe('Hi **Ann**');
  });

  test('text the HTML parser reads differently from the source is read as a browser does: CRLF, a heading inside a heading, a comment between texts', () => {
    expect(htmlToText('<p>x</p><pre><code>a\r\nb\rc</code></pre>')).toBe('x\n\n    a\n    b\n    c');
    expect(htmlToText('<h1><h2>Title</h2>Rest</h1>')).toBe('## Title\n\nRest');
    // Two text nodes: the second starts a line with '#', which must not read as a heading.
    expect(htmlToText('<p>a<br>x<!-- c --># b</p>')).toBe('a  \nx\\# b');
  });

  test('ordinary documents convert as before', () => {
    const html =
      '<h1>Hi</h1><p>Dear <b>Ann</b>,<br>see <a href="https://x.test/a b">this</a>&nbsp;now.</p>  <ul><li>one</li><li>two <i> three </i></li></ul><pre><code>a\n    b\n</code></pre><table><tr><td>&nbsp;1</td><td> 2</td></tr></table>';
    expect(htmlToText(html)).toBe(
      '# Hi\n\nDear **Ann**,  \nsee [this](<https://x.test/a b>)\u00a0now.\n\n-   one\n-   two _three_\n\n    a\n        b\n    \n\n\u00a01\n\n2',
    );
    expect(pageMarkdown(loadHtml(`<html><body><main>${html}</main></body></html>`), 'fit')).toEqual([
      '# Hi',
      'Dear **Ann**,\nsee [this](<https://x.test/a b>)\u00a0now.',
      '-   one\n-   two *three*',
      '```\na\n    b\n```',
      '1',
      '2',
    ]);
  });
});
