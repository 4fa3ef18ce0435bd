import { parseDocument } from 'htmlparser2';
import { domToMarkdown } from '../../lib/dom-markdown';

// The compendium's Markdown follows turndown's conventions (it was turndown's until the converter
// read the parsed page itself). Each expected string below is what turndown 7.2.5 (atx headings,
// fenced code, '-' bullets, '*' emphasis) wrote for the same HTML: lists with a start and nesting,
// quotes, code spans with backticks, links and images with titles and spaces, escapes at a text's
// start, whitespace at inline edges and next to no-break spaces, a fence longer than the code's own.
const COMPENDIUM = {
  codeBlockStyle: 'fenced',
  emDelimiter: '*',
  remove: ['script', 'style', 'noscript', 'template', 'iframe', 'object', 'canvas', 'svg'],
} as const;
const md = (html: string) =>
  domToMarkdown(parseDocument(html).children, { ...COMPENDIUM, remove: [...COMPENDIUM.remove] });

describe('HTML to Markdown from the parsed page (lib/dom-markdown.ts)', () => {
  test.each([
    [
      '<ol start="3"><li>three</li><li>four<ul><li>nested <b>bold</b></li></ul></li></ol>',
      '3.  three\n4.  four\n    -   nested **bold**',
    ],
    ['<blockquote><p>quote one</p><p>quote two</p></blockquote>', '> quote one\n> \n> quote two'],
    ['<p>Use <code>a`b</code> and <code>`x`</code> here</p>', 'Use ``a`b`` and `` `x` `` here'],
    [
      '<p><a href="https://x.test/a b" title="T &quot;q&quot;">link</a> and <img src="/i.png" alt="an [alt]" title="t"></p>',
      '[link](<https://x.test/a b> "T \\"q\\"") and ![an \\[alt\\]](/i.png "t")',
    ],
    [
      '<p>1. not a list</p><p>- not a bullet</p><p># not a heading</p><p>* star _under_ [br]</p>',
      '1\\. not a list\n\n\\- not a bullet\n\n\\# not a heading\n\n\\* star \\_under\\_ \\[br\\]',
    ],
    ['<p>a <em> spaced </em> b<strong></strong>c <i>x</i><b>y</b></p>', 'a *spaced* bc *x***y**'],
    ['<pre><code class="language-js">const a = 1;\n```\nx\n</code></pre>', '````js\nconst a = 1;\n```\nx\n````'],
    [
      '<p>line<br>break</p><hr><h3>Three</h3><div>block <span> inline </span> end</div>',
      'line  \nbreak\n\n* * *\n\n### Three\n\nblock inline end',
    ],
    ['<table><tr><th>h</th><td> cell </td></tr></table><p>after</p>', 'h\n\ncell\n\nafter'],
    ['<ul><li><p>para item</p></li><li>plain</li></ul>', '-   para item\n    \n-   plain'],
    [
      '<p>text&nbsp;&nbsp; <a href="/x"> spaced link </a>&nbsp;after</p>',
      'text\u00a0\u00a0 [spaced link](/x) \u00a0after',
    ],
    ['<div><p>in div</p>text after p<span>span</span></div>', 'in div\n\ntext after pspan'],
  ])('%j reads as turndown wrote it', (html, expected) => {
    expect(md(html)).toBe(expected);
  });

  test('soft hyphens are dropped, so a hyphenated word reads (and is searched) as one word', () => {
    // turndown keeps them; a German page set with `&shy;` (hyphenation points) would index "Wäh\u00adrend".
    expect(md('<p>Wäh&shy;rend Sie über den Markt schlen&#173;dern</p><pre><code>co\u00adde</code></pre>')).toBe(
      'Während Sie über den Markt schlendern\n\n```\ncode\n```',
    );
  });

  test('a <pre> without a <code> child (Pygments, Rouge, hand-written) is a code block: its lines and characters as written', () => {
    // turndown wrote such a block as paragraph text with `_`, `*` and `[` escaped (`lower\_bound`),
    // which a Markdown reader renders with its lines run together: toc-missing in Readability's pages.
    expect(
      md(
        '<p>Query:</p><div class="highlight"><pre><span class="k">SELECT</span> <span class="n">lower_bound</span>, <span class="o">*</span>\n  <span class="k">FROM</span> unnest(array[2, 3]) <b>AS</b> n;\n</pre></div><p>after</p>',
      ),
    ).toBe('Query:\n\n```\nSELECT lower_bound, *\n  FROM unnest(array[2, 3]) AS n;\n```\n\nafter');
    expect(md('<pre class="language-sql">a<br>b_c</pre>')).toBe('```sql\na\nb_c\n```');
  });

  test("the caller's document is left as it was", () => {
    const doc = parseDocument('<p>a   <b> b </b></p><!-- c --><p>d</p>');
    const before = JSON.stringify(doc.children.map((n) => ('data' in n ? n.data : n.type)));
    domToMarkdown(doc.children);
    expect(JSON.stringify(doc.children.map((n) => ('data' in n ? n.data : n.type)))).toBe(before);
    expect((doc.children[0] as unknown as { children: { data?: string }[] }).children[0]?.data).toBe('a   ');
  });
});
