import { JSDOM } from 'jsdom';
import { SCRIPT_REDIRECT_LIKELY } from '../../activities/landing/in-page';

// The in-page check that keeps a capture waiting for a script hop (activities/landing/capture.ts).
function likely(html: string): boolean {
  const dom = new JSDOM(html, { runScripts: 'outside-only' });
  try {
    return dom.window.eval(SCRIPT_REDIRECT_LIKELY) as boolean;
  } finally {
    dom.window.close();
  }
}

test('an interstitial whose script assigns the location is a likely hop, in each way of writing it', () => {
  for (const code of ['setTimeout(() => location.replace("/landing"), 50);', 'window.location = "/x";', 'location.href="/x"', 'top.location = u;', 'document.location.assign("/y")']) {
    expect({ code, likely: likely(`<html><body>One moment<script>${code}</script></body></html>`) }).toEqual({ code, likely: true });
  }
});

test('a landing page with text, a script that only reads or compares the location, or an external script is not', () => {
  expect(likely(`<html><body><p>${'Widgets for modern teams. '.repeat(30)}</p><script>location.replace("/x")</script></body></html>`)).toBe(false);
  expect(likely('<html><body>Hi<script>if (location.href == "/a") console.log(location.pathname);</script></body></html>')).toBe(false);
  expect(likely('<html><body>Hi<script src="/redirect.js"></script></body></html>')).toBe(false);
});
