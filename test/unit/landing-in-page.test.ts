import { JSDOM } from 'jsdom';
import { HOP_HINTS, SCRIPT_REDIRECT_LIKELY, SNAPSHOT_HTML } from '../../activities/landing/in-page';

// The in-page scripts of a capture (activities/landing/capture.ts), run in jsdom.
function evaluate<T>(html: string, script: string, prepare?: (dom: JSDOM) => void): { result: T; dom: JSDOM } {
  const dom = new JSDOM(html, { runScripts: 'outside-only' });
  prepare?.(dom);
  return { result: dom.window.eval(script) as T, dom };
}

function likely(html: string): boolean {
  const { result, dom } = evaluate<boolean>(html, SCRIPT_REDIRECT_LIKELY);
  dom.window.close();
  return result;
}

test('an interstitial whose script assigns the location is a likely hop, in each way of writing it', () => {
  for (const code of [
    'setTimeout(() => location.replace("/landing"), 50);',
    'window.location = "/x";',
    'location.href="/x"',
    'top.location = u;',
    'document.location.assign("/y")',
  ]) {
    expect({ code, likely: likely(`<html><body>One moment<script>${code}</script></body></html>`) }).toEqual({
      code,
      likely: true,
    });
  }
});

test('a landing page with text, a script that only reads or compares the location, or an external script is not', () => {
  expect(
    likely(
      `<html><body><p>${'Widgets for modern teams. '.repeat(30)}</p><script>location.replace("/x")</script></body></html>`,
    ),
  ).toBe(false);
  expect(
    likely('<html><body>Hi<script>if (location.href == "/a") console.log(location.pathname);</script></body></html>'),
  ).toBe(false);
  expect(likely('<html><body>Hi<script src="/redirect.js"></script></body></html>')).toBe(false);
});

test('the hop hints read a meta refresh delay and a likely script hop in one call', () => {
  const hints = (html: string) => {
    const { result, dom } = evaluate<{ refresh: number | null; scriptHop: boolean }>(html, HOP_HINTS);
    dom.window.close();
    return { ...result };
  };
  expect(
    hints('<html><head><meta http-equiv="refresh" content="0; url=/next"></head><body>Redirecting...</body></html>'),
  ).toEqual({ refresh: 0, scriptHop: false });
  expect(hints('<html><body>One moment<script>location.replace("/landing")</script></body></html>')).toEqual({
    refresh: null,
    scriptHop: true,
  });
  expect(hints('<html><body><h1>Offer</h1></body></html>')).toEqual({ refresh: null, scriptHop: false });
});

test('the HTML snapshot points each image at what it shows and leaves the page itself untouched', () => {
  const page =
    '<!DOCTYPE html><html><head><title>Offer</title></head><body>' +
    '<img id="lazy" class="lazy" data-src="/img/lazy.png" loading="lazy" alt="logo">' +
    '<picture><source srcset="/img/wide.webp" media="(min-width: 800px)"><img id="pic" src="/img/narrow.png" srcset="/img/narrow.png 1x, /img/narrow@2x.png 2x"></picture>' +
    '<img id="plain" src="/img/plain.png"></body></html>';
  // What Chromium reports as shown: the lazy loader swapped data-src in; the picture chose its source.
  const shown: Record<string, string> = {
    lazy: 'http://x.test/img/lazy.png',
    pic: 'http://x.test/img/wide.webp',
    plain: '',
  };
  const { result, dom } = evaluate<string>(page, `${SNAPSHOT_HTML}()`, (d) => {
    for (const img of d.window.document.querySelectorAll('img'))
      Object.defineProperty(img, 'currentSrc', { value: shown[img.id] });
  });
  const before = dom.serialize();
  expect(result).toMatch(/^<!DOCTYPE html><html>/);
  const copy = new JSDOM(result).window.document;
  expect(copy.getElementById('lazy')?.getAttribute('src')).toBe('http://x.test/img/lazy.png');
  expect(copy.getElementById('lazy')?.hasAttribute('loading')).toBe(false);
  expect(copy.getElementById('pic')?.getAttribute('src')).toBe('http://x.test/img/wide.webp');
  expect(copy.getElementById('pic')?.hasAttribute('srcset')).toBe(false);
  expect(copy.querySelectorAll('picture source')).toHaveLength(0);
  expect(copy.getElementById('plain')?.getAttribute('src')).toBe('/img/plain.png');
  // The live page (which the screenshots are taken of afterwards) is as it was.
  expect(dom.serialize()).toBe(before);
  expect(dom.window.document.querySelector('picture source')).not.toBeNull();
  expect(dom.window.document.getElementById('lazy')?.hasAttribute('src')).toBe(false);
  dom.window.close();
});
