import { htmlToMarkdown } from '../../activities/site/compendium';

// What is inside code and inside a data table is kept as it is: the cleaning that drops comment
// threads and link clutter from an article is not for a highlighter's spans or a table's cells.
const PROSE = [
  'The new build flag removes the JavaScript glue from the output, so the module runs on any runtime that implements the system interface.',
  'Before it existed, every program compiled this way needed a loader written for the browser, and the servers that wanted to run it had to emulate one.',
  'The example below exports a single function that adds two numbers, and the second listing shows how a host calls it after loading the file.',
  'Sizes were measured on the release build with the default optimisation level, and every figure is the median of ten builds on the same machine.',
];
const paragraphs = PROSE.map((p) => `<p>${p}</p>`).join('');
const fit = (body: string) =>
  htmlToMarkdown(`<html><body><article>${body}</article></body></html>`, 'fit', 'https://blog.test/post');

describe('fit: code and data tables are not cleaned inside', () => {
  test("a highlighter's `token comment` span is code, not a comment thread, and a <br> in code breaks the line", () => {
    const md = fit(
      `${paragraphs}<pre class="language-c"><code class="language-c"><span class="token comment">// add.c</span><br><span class="token keyword">int</span> add(<span class="token keyword">int</span> x, <span class="token keyword">int</span> y) {<br>  <span class="token keyword">return</span> x + y;<br>}</code></pre>`,
    );
    expect(md).toContain('```c\n// add.c\nint add(int x, int y) {\n  return x + y;\n}\n```');
  });

  test("a data table's cells stay, links and short figures too (the table is data, not a menu nor a page's tail)", () => {
    const rows = [
      ['Farm Heroes Saga', '71.1 MB', '13.4 MB', '81%'],
      ['Google Maps', '32.7 MB', '17.5 MB', '47%'],
      ['Gmail', '17.8 MB', '7.6 MB', '57%'],
      ['Kindle', '52.4 MB', '19.1 MB', '64%'],
    ];
    const table = `<table><tbody><tr><td>App</td><td>Original</td><td>Patch</td><td>Saving</td></tr>${rows
      .map(
        ([app, ...cells]) =>
          `<tr><td><div><a href="https://apps.test/${app?.replace(/ /g, '')}">${app}</a></div></td>${cells.map((c) => `<td><div>${c}</div></td>`).join('')}</tr>`,
      )
      .join('')}</tbody></table>`;
    const md = fit(`${paragraphs}${table}`);
    for (const [app] of rows) expect(md).toContain(`[${app}]`);
    expect(md).toContain('71.1 MB');
  });

  test('a table that is all links (a navigation box laid out as a grid) is still cleaned inside', () => {
    const links = Array.from(
      { length: 12 },
      (_, i) => `<li><a href="/wiki/Topic_${i}">Related topic number ${i}</a></li>`,
    );
    const navbox = `<table class="navbox"><tbody>${[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
      .map((i) => `<tr><th>Group ${i}</th><td><ul>${links.slice(0, 3).join('')}</ul></td></tr>`)
      .join('')}</tbody></table>`;
    const md = fit(`${paragraphs}${navbox}`);
    for (const p of PROSE) expect(md).toContain(p);
    expect(md).not.toContain('Related topic number 1');
  });
});
