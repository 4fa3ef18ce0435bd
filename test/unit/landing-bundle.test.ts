import { load } from 'cheerio';
import { bundleHtml, plainSnapshot } from '../../activities/landing/bundle';
import { bundleOffLoop, plainSnapshotOffLoop } from '../../activities/landing/bundle-worker';

// page.html is served as text/html from the public media bucket: no link in it may run script.
// A tab inside the scheme (java&#x09;script:) passed the check, and making links absolute then
// wrote a clean javascript: URL.
const HOSTILE = `<html><head></head><body>
<a id="a1" href="java&#x09;script:alert(document.domain)">tab</a>
<a id="a2" href="&#x20;&#x0a;javascript&#x3a;alert(1)">newline</a>
<svg><a id="a3" xlink:href="javascript:alert(2)"><text y="20">svg</text></a></svg>
<form id="f1"><button id="b1" formaction="java&#x0d;script:alert(4)">go</button></form>
<svg><animate id="an" href="#x" attributeName="href" values="javascript:alert(5)"/></svg>
<a id="d1" href="data:text/html,&lt;script&gt;alert(6)&lt;/script&gt;">data</a>
<a id="ok" href="/pricing">pricing</a> <a id="mail" href="mailto:sales@acme.test">mail</a>
<img id="img" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
</body></html>`;

const scripted = (html: string) => /(javascript|vbscript):|href="data:/i.test(html.replace(/[\t\n\r]/g, ''));

test('the bundle keeps no script URL, however its scheme is spelled, and keeps the ordinary links', async () => {
  const { html } = await bundleHtml(HOSTILE, 'https://acme.test/lp', new Map(), async () => null, 1_000_000);
  expect(scripted(html)).toBe(false);
  expect(html).toContain('href="https://acme.test/pricing"');
  expect(html).toContain('href="mailto:sales@acme.test"');
  expect(html).toContain('src="data:image/gif;base64,R0lGODlhAQABAAAAACw="');
});

test('the plain snapshot (when bundling fails) neither', () => {
  const html = plainSnapshot(HOSTILE);
  expect(scripted(html)).toBe(false);
  expect(html).toContain('href="/pricing"');
});

test('url() and @import are inlined whatever their quotes and spaces, and a hostile style is read in linear time', async () => {
  const png = { status: 200, contentType: 'image/png', body: Buffer.from([0x89, 0x50, 0x4e, 0x47]) };
  const css = (text: string) => ({ status: 200, contentType: 'text/css', body: Buffer.from(text) });
  const cached = new Map([
    ['https://acme.test/img/a.png', png],
    ['https://acme.test/img/b.png', png],
    ['https://acme.test/img/c.png', png],
    [
      'https://acme.test/site.css',
      css(`@import url(more.css) screen;\n.a{background:url(/img/a.png)} .c{background:url( '/img/c.png' )}`),
    ],
    ['https://acme.test/more.css', css('.b{background:url( "/img/b.png" )}')],
  ]);
  const page =
    '<html><head><link rel="stylesheet" href="/site.css"></head><body><div style="background:url( \'/img/a.png\' )">x</div></body></html>';
  const { html } = await bundleHtml(page, 'https://acme.test/lp', cached, async () => null, 1_000_000);
  const uri = 'url("data:image/png;base64,iVBORw==")';
  expect(html).toContain(`.b{background:${uri}}`);
  expect(html).toContain(`.a{background:${uri}}`);
  expect(html).toContain(`.c{background:${uri}}`);
  expect(html).toContain(`style="background:${uri.replace(/"/g, '&quot;')}"`);
  expect(html).not.toContain('@import');

  // A <style> element's url()s and @imports: the first url() was skipped (a global regex's test left
  // its lastIndex for matchAll), and with only one, the style kept its link.
  const styled =
    '<html><head><style>.a{background:url(/img/a.png)} .c{background:url("/img/c.png")}</style><style>@import "/more.css"; .d{background:url(img/b.png)}</style></head><body></body></html>';
  const inStyle = (await bundleHtml(styled, 'https://acme.test/lp', cached, async () => null, 1_000_000)).html;
  expect(inStyle).toContain(`<style>.a{background:${uri}} .c{background:${uri}}</style>`);
  expect(inStyle).toContain(`<style>.b{background:${uri}} .d{background:${uri}}</style>`);

  // A run of spaces after url( with no end in a style attribute, in <style> and in a stylesheet, and
  // @imports without their `;`: 3,000 spaces took 15 s before (cubic); these would have taken hours.
  const run = ' '.repeat(20_000);
  const hostileCss = new Map([
    ['https://acme.test/h.css', css(`.x{background:url(${run}}${'@import a '.repeat(20_000)}`)],
  ]);
  const hostile = `<html><head><link rel="stylesheet" href="/h.css"><style>.x{background:url(${run}}</style></head><body><div style="background:url(${run}">x</div></body></html>`;
  const started = Date.now();
  await bundleHtml(hostile, 'https://acme.test/lp', hostileCss, async () => null, 1_000_000);
  // A bound only the defect crosses (backtracking on the runs: hours), not a timing: it takes tens of ms.
  expect(Date.now() - started).toBeLessThan(5000);
});

// Issue 38 item 5: the fallback snapshot kept what runs or loads script on the media origin. The
// payloads are the embedding and navigation vectors of OWASP's XSS Filter Evasion Cheat Sheet
// (iframe srcdoc, meta refresh to a javascript: or data: URL, object/embed data, base href),
// written out here.
test.each([
  ['iframe srcdoc', '<iframe srcdoc="<script>alert(document.domain)</script>"></iframe>', /<iframe/i],
  ['meta refresh javascript:', '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">', /refresh/i],
  [
    'meta refresh data:',
    '<meta http-equiv="Refresh" content="0; url=data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">',
    /refresh/i,
  ],
  ['object data', '<object data="data:text/html,<script>alert(1)</script>"></object>', /<object/i],
  ['embed src', '<embed src="data:image/svg+xml,<svg onload=alert(1)>">', /<embed/i],
  ['base href', '<base href="https://attacker.example/">', /<base/i],
])('the plain snapshot drops %s, as the bundle does', (_what, payload, kept) => {
  const page = `<!doctype html><html><head><title>x</title>${payload}</head><body><p>hello</p>${payload}</body></html>`;
  const html = plainSnapshot(page);
  expect(html).not.toMatch(kept);
  expect(html).toContain('<p>hello</p>');
});

// Issue 38 item 10: the bundle was parsed with parse5, quadratic in one element's attributes (40k
// attributes: 4.6 s, all on the worker's event loop, where heartbeats and the cancel are handled).
test('an element with 40,000 attributes is bundled without holding the event loop past the 3 s cancel bound', async () => {
  const attributes = Array.from({ length: 40_000 }, (_, i) => `data-a${i}="v"`).join(' ');
  const page = `<!doctype html><html><head><title>t</title></head><body><div ${attributes}>many</div></body></html>`;
  let last = Date.now();
  let longest = 0;
  const tick = setInterval(() => {
    longest = Math.max(longest, Date.now() - last);
    last = Date.now();
  }, 10);
  try {
    const { html } = await bundleHtml(page, 'https://acme.test/lp', new Map(), async () => null, 20_000_000);
    expect(html).toContain('>many</div>');
    expect(plainSnapshot(page)).toContain('>many</div>');
    await new Promise((r) => setTimeout(r, 30));
  } finally {
    clearInterval(tick);
  }
  longest = Math.max(longest, Date.now() - last);
  expect(longest).toBeLessThan(3000);
});

// Issue 38 item 5: whatever gets past the removal list cannot run where the stored HTML is opened.
test('every stored document opens with a policy that forbids script, before anything else a browser parses', async () => {
  const page = '<!doctype html><html><head><title>t</title></head><body><p>x</p></body></html>';
  const policy = /^<!DOCTYPE html><meta http-equiv="Content-Security-Policy" content="default-src 'none';[^"]*">/i;
  expect((await bundleHtml(page, 'https://acme.test/lp', new Map(), async () => null, 1_000_000)).html).toMatch(policy);
  expect(plainSnapshot(page)).toMatch(policy);
  // Without a doctype or a head (a server's own HTML, the plain snapshot's source): first of all.
  expect(plainSnapshot('<p>no head</p>')).toMatch(
    /^<meta http-equiv="Content-Security-Policy" content="default-src 'none';/,
  );
});

// The bundle is re-read by the browser that opens it, with the HTML standard's parser: what the
// sanitiser's parser (htmlparser2) reads differently must not smuggle a handler or script through
// (comments ended by --!>, style inside MathML/SVG, noembed/noframes/xmp raw text). Each result is
// re-parsed with parse5 (the standard's algorithm, as Chromium parses) and searched for script.
test("what the sanitiser's parser reads differently from a browser carries no script into the stored HTML", async () => {
  const VECTORS = [
    '<!-- --!><img src=x onerror=alert(1)> -->',
    '<math><mtext><table><mglyph><style><img src=x onerror=alert(2)></style></mglyph></table></mtext></math>',
    '<svg><style><img src=x onerror=alert(3)></style></svg>',
    '<svg><noembed>&lt;img src=x onerror=alert(4)&gt;</noembed></svg>',
    '<noembed><img src=x onerror=alert(5)></noembed><noframes><img src=x onerror=alert(6)></noframes>',
    '<xmp></xmp><img src=x onerror=alert(7)></xmp>',
    '<title>&lt;/title&gt;&lt;img src=x onerror=alert(8)&gt;</title>',
    '<svg><![CDATA[</svg><img src=x onerror=alert(9)>]]></svg>',
  ];
  // cheerio's default parser is parse5.
  const scripts = (html: string): string[] => {
    const $ = load(html);
    return [
      ...$('script')
        .toArray()
        .map(() => '<script>'),
      ...$('*')
        .toArray()
        .flatMap((el) =>
          'attribs' in el
            ? Object.keys(el.attribs)
                .filter((a) => /^on/i.test(a))
                .map((a) => `${el.name} ${a}`)
            : [],
        ),
    ];
  };
  for (const vector of VECTORS) {
    const page = `<!doctype html><html><head></head><body>${vector}<p>after</p></body></html>`;
    const bundled = (await bundleHtml(page, 'https://acme.test/lp', new Map(), async () => null, 1_000_000)).html;
    expect([vector, scripts(bundled)]).toEqual([vector, []]);
    expect([vector, scripts(plainSnapshot(page))]).toEqual([vector, []]);
  }
});

// Issue 38 item 10, the heartbeats: htmlparser2 is linear, but a page near LANDING_MAX_BUNDLE_BYTES
// still took 5-12 s to parse, sanitise and write here, all on the activity's event loop (heartbeats
// every 500 ms, a cancel within 3 s). Large pages are bundled in a worker thread.
test('a page near LANDING_MAX_BUNDLE_BYTES is bundled without holding the event loop 3 s, and a cancel ends its bundling within 3 s', async () => {
  const page = `<!doctype html><html><head></head><body>${'<p class="c" style="color:red">text <b>bold</b></p>'.repeat(300_000)}<p id="end">end</p></body></html>`;
  let last = Date.now();
  let longest = 0;
  const tick = setInterval(() => {
    longest = Math.max(longest, Date.now() - last);
    last = Date.now();
  }, 10);
  try {
    const { html } = await bundleOffLoop(
      page,
      'https://acme.test/lp',
      new Map(),
      async () => null,
      20 * 1024 * 1024,
      new AbortController().signal,
    );
    expect(html).toContain('<p id="end">end</p>');
    expect(await plainSnapshotOffLoop(page, new AbortController().signal)).toContain('<p id="end">end</p>');
    await new Promise((r) => setTimeout(r, 30));
  } finally {
    clearInterval(tick);
  }
  longest = Math.max(longest, Date.now() - last);
  expect(longest).toBeLessThan(3000);

  const cancel = new AbortController();
  const bundling = bundleOffLoop(
    page,
    'https://acme.test/lp',
    new Map(),
    async () => null,
    20 * 1024 * 1024,
    cancel.signal,
  );
  await new Promise((r) => setTimeout(r, 300));
  // The spec's 3 s for a cancel, as a bound set before the abort: past it the race fails with its own reason.
  const bound = new Promise<never>((_, reject) =>
    setTimeout(() => reject(new Error('still bundling 3 s after the cancel')), 3000).unref(),
  );
  cancel.abort(new Error('cancelled'));
  await expect(Promise.race([bundling, bound])).rejects.toThrow('cancelled');
}, 120_000);
