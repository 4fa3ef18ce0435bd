import { bundleHtml, plainSnapshot } from '../../activities/landing/bundle';

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
