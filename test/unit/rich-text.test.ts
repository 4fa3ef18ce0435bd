import {
  documentSchema,
  InvalidDocumentError,
  MAX_DOCUMENT_NODES,
  parseDocument,
  readingTime,
  renderDocument,
} from '../../lib/rich-text';

const text = (t: string, marks?: unknown[]) => ({ type: 'text', text: t, ...(marks ? { marks } : {}) });
const p = (...content: unknown[]) => ({ type: 'paragraph', content });
const doc = (...content: unknown[]) => ({ type: 'doc', content });
const render = (json: unknown) => renderDocument(parseDocument(json));

describe('the rich-text document schema (TipTap StarterKit + image)', () => {
  test('has the StarterKit nodes and marks under their TipTap names', () => {
    expect(Object.keys(documentSchema.nodes).sort()).toEqual(
      [
        'blockquote',
        'bulletList',
        'codeBlock',
        'doc',
        'hardBreak',
        'heading',
        'horizontalRule',
        'image',
        'listItem',
        'orderedList',
        'paragraph',
        'text',
      ].sort(),
    );
    expect(Object.keys(documentSchema.marks).sort()).toEqual(['bold', 'code', 'italic', 'link', 'strike', 'underline']);
  });

  test('a document as the TipTap editor writes it renders to the matching HTML', () => {
    const json = doc(
      { type: 'heading', attrs: { level: 2 }, content: [text('Why leads go cold')] },
      p(
        text('Plain, '),
        text('bold', [{ type: 'bold' }]),
        text(' and '),
        text('a link', [{ type: 'link', attrs: { href: 'https://example.com/x' } }]),
        { type: 'hardBreak' },
        text('next line'),
      ),
      {
        type: 'bulletList',
        content: [
          { type: 'listItem', content: [p(text('one'))] },
          { type: 'listItem', content: [p(text('two'))] },
        ],
      },
      { type: 'orderedList', attrs: { start: 3 }, content: [{ type: 'listItem', content: [p(text('three'))] }] },
      { type: 'blockquote', content: [p(text('quoted'))] },
      { type: 'codeBlock', attrs: { language: 'ts' }, content: [text('const a = 1 < 2;')] },
      { type: 'horizontalRule' },
      { type: 'image', attrs: { src: 'https://cdn.example.com/a.png', alt: 'chart' } },
    );
    const html = render(json);
    expect(html).toContain('<h2>Why leads go cold</h2>');
    expect(html).toContain(
      '<p>Plain, <strong>bold</strong> and <a target="_blank" rel="noopener noreferrer nofollow" href="https://example.com/x">a link</a><br />next line</p>',
    );
    expect(html).toContain('<ul><li><p>one</p></li><li><p>two</p></li></ul>');
    expect(html).toContain('<ol start="3"><li><p>three</p></li></ol>');
    expect(html).toContain('<blockquote><p>quoted</p></blockquote>');
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;</code></pre>');
    expect(html).toContain('<hr />');
    expect(html).toContain('<img src="https://cdn.example.com/a.png" alt="chart" />');
  });

  test('unknown nodes and marks, wrong content and non-documents are refused with the reason', () => {
    const bad: [unknown, RegExp][] = [
      [doc({ type: 'video', attrs: { src: 'x' } }), /Unknown node type: video/],
      [doc(p(text('x', [{ type: 'highlight' }]))), /mark type highlight/],
      [doc(text('text straight in the doc')), /Invalid content for node doc/],
      [doc({ type: 'bulletList', content: [p(text('not in a listItem'))] }), /Invalid content for node bulletList/],
      [{ type: 'paragraph', content: [] }, /type "doc"/],
      [[doc()], /rich-text JSON document/],
      ['<p>html</p>', /rich-text JSON document/],
      [doc(p({ type: 'text', text: '' })), /Empty text nodes/],
    ];
    for (const [json, reason] of bad) {
      let error: unknown;
      try {
        parseDocument(json);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(InvalidDocumentError);
      expect((error as Error).message).toMatch(reason);
    }
    // The doc needs one block at least: the editor's empty document is one empty paragraph.
    expect(() => parseDocument(doc())).toThrow(/Invalid content for node doc/);
    expect(() => parseDocument(doc(p()))).not.toThrow();
  });

  test('unsafe link and image URLs and heading levels outside 1-6 are refused; attributes the schema lacks are not kept', () => {
    const bad: [unknown, RegExp][] = [
      [
        doc(p(text('js', [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }]))),
        /link href must be an http, https, mailto or relative URL/,
      ],
      // Browsers drop tabs and newlines inside a URL: this is javascript: too.
      [doc(p(text('js', [{ type: 'link', attrs: { href: 'java\tscript:alert(1)' } }]))), /link href must be/],
      [
        doc(p(text('data', [{ type: 'link', attrs: { href: 'data:text/html,<script>alert(1)</script>' } }]))),
        /link href must be/,
      ],
      [
        doc({ type: 'image', attrs: { src: 'javascript:alert(2)' } }),
        /image src must be an http, https or relative URL/,
      ],
      [doc({ type: 'image', attrs: { src: 'mailto:a@b.example' } }), /image src must be/],
      [doc({ type: 'image', attrs: { src: 'http://[' } }), /image src is not a valid URL/],
      [
        doc({ type: 'heading', attrs: { level: 9 }, content: [text('h9')] }),
        /heading level must be an integer from 1 to 6, not 9/,
      ],
      [doc({ type: 'heading', attrs: { level: '2' }, content: [text('h')] }), /heading level/],
    ];
    for (const [json, reason] of bad) expect(() => parseDocument(json)).toThrow(reason);
    for (const href of ['https://example.com/x', 'mailto:sales@example.com', '/pricing', '#top']) {
      expect(() => parseDocument(doc(p(text('ok', [{ type: 'link', attrs: { href } }]))))).not.toThrow();
    }
    const json = parseDocument(
      doc(p(text('click', [{ type: 'link', attrs: { href: 'https://example.com/', onclick: 'x' } }])), {
        type: 'image',
        attrs: { src: '/a.png', onerror: 'x' },
      }),
    ).toJSON() as unknown;
    expect(JSON.stringify(json)).not.toMatch(/onclick|onerror/);
    expect(JSON.stringify(json)).toContain('"href":"https://example.com/"');
  });

  test('text is escaped and unsafe URLs never reach the HTML, even in a document built without the checks', () => {
    // parseDocument refuses these URLs; the HTML's sanitiser is the second line, checked on its own here.
    const render = (json: unknown) => renderDocument(documentSchema.nodeFromJSON(json));
    const html = render(
      doc(
        p(text('<script>alert(1)</script> & "quotes"')),
        p(text('js link', [{ type: 'link', attrs: { href: 'javascript:alert(1)' } }])),
        p(text('data link', [{ type: 'link', attrs: { href: 'data:text/html,<script>alert(1)</script>' } }])),
        { type: 'image', attrs: { src: 'javascript:alert(1)', alt: '" onerror="alert(1)' } },
      ),
    );
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/javascript:/i);
    expect(html).not.toMatch(/data:text/i);
    // The quote stays inside the attribute's value.
    expect(html).toContain('<img alt="&quot; onerror=&quot;alert(1)" />');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt; &amp; "quotes"');
  });

  test('a document of more than 20,000 nodes and marks is refused before it is checked or rendered; one at the limit is read', () => {
    // 1 doc + 9,999 paragraphs of one text node + one bold mark: exactly the limit.
    const paragraphs = Array.from({ length: 9_999 }, (_, i) =>
      p(text(`paragraph ${i}`, i === 0 ? [{ type: 'bold' }] : undefined)),
    );
    expect(MAX_DOCUMENT_NODES).toBe(20_000);
    expect(parseDocument(doc(...paragraphs)).childCount).toBe(9_999);
    expect(() => parseDocument(doc(...paragraphs, p(text('one more'))))).toThrow('more than 20000 nodes and marks');
    // 30,000 paragraphs (1.8 MB of JSON) held the API's thread about a second.
    const tooMany = doc(...Array.from({ length: 30_000 }, () => p(text('a'))));
    expect(() => parseDocument(tooMany)).toThrow(
      new InvalidDocumentError('the document has more than 20000 nodes and marks'),
    );
    // Marks count too: 7,000 text nodes with three marks each.
    const marked = doc(
      p(
        ...Array.from({ length: 7_000 }, (_, i) =>
          text(`w${i} `, [{ type: 'bold' }, { type: 'italic' }, { type: 'underline' }]),
        ),
      ),
    );
    expect(() => parseDocument(marked)).toThrow('more than 20000 nodes and marks');
  });

  test('reading time: words at 200 a minute, rounded up, at least one minute', () => {
    const words = (n: number) => doc(p(text(Array.from({ length: n }, (_, i) => `word${i}`).join(' '))));
    expect(readingTime(parseDocument(doc(p())))).toBe(1);
    expect(readingTime(parseDocument(words(200)))).toBe(1);
    expect(readingTime(parseDocument(words(201)))).toBe(2);
    expect(readingTime(parseDocument(words(1000)))).toBe(5);
    // Blocks are word boundaries: "end" and "start" of two paragraphs are two words.
    expect(readingTime(parseDocument(doc(...Array.from({ length: 401 }, (_, i) => p(text(`w${i}`))))))).toBe(3);
  });
});
