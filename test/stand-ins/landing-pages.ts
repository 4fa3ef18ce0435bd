import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { deflateSync } from 'node:zlib';
import { listenLocal } from './listen';

/**
 * Landing pages on 127.0.0.1 for the crawlLanding tests and bench, in the shapes ad traffic meets:
 *   /ad/click?...      an ad tracking link: 302 -> 301 -> a meta refresh page -> a script `location` hop -> /landing
 *   /landing           the offer page: consent popup (a CMP-style banner answered in German), lazy images
 *                      (IntersectionObserver swaps data-src in), external CSS with a url() background and a web
 *                      font stack, h1/h2, a prominent CTA, a lead form, a video, a chat widget, og: meta
 *   /never-idle        loads, opens a request to /hold (never answered: network idle never comes, however
 *                      slow the renderer) and polls /ping every 100 ms for ever
 *   /crash             exhausts the renderer's memory shortly after it loads (Chromium's renderer dies: "Aw, Snap")
 *   /loop/<n>          302 to /loop/<n+1> without end (max_redirects)
 *   /plain             a minimal page (the bench's page, and the bare loop's)
 *   /late/busy         fits its viewport; after load its script runs for 400 ms, then fetches /late/offer and shows it
 *   /late/timer        the same with the fetch 150 ms after load on a timer (content a page loads after it is "done")
 *   /ad/to-private     302 to `privateBaseUrl` (an address the SSRF guard refuses)
 *   /sneaky            a page whose stylesheet, image and fetch() point at `privateBaseUrl`
 *   /many-slow         a page with 16 images, each answered after 400 ms (many requests in flight at once)
 *   /stuck-image       a page whose one image is a /hold (never answered: load never comes; the bundle waits on it)
 * Every request is counted per path (query dropped) and logged with its arrival time and query.
 */
export interface LandingPages {
  baseUrl: string;
  count(path: string): number;
  /** The requests to `path` in the order they arrived: when (ms since epoch) and their query. */
  log(path: string): { at: number; query: URLSearchParams }[];
  /** Requests to /hold whose client has not hung up yet. */
  held(): number;
  close(): Promise<void>;
}

/** A small solid-colour PNG (real bytes, so screenshots and bundles carry real images). */
export function png(width: number, height: number, rgb: [number, number, number]): Buffer {
  const crcTable = Array.from({ length: 256 }, (_, n) => {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    return c >>> 0;
  });
  const crc = (buf: Buffer) => {
    let c = 0xffffffff;
    for (const b of buf) c = (crcTable[(c ^ b) & 0xff] as number) ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  };
  const chunk = (type: string, data: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const sum = Buffer.alloc(4);
    sum.writeUInt32BE(crc(body));
    return Buffer.concat([len, body, sum]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const LANDING = `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Widget Pro | Ship widgets twice as fast</title>
<meta name="description" content="Widget Pro helps teams ship precision widgets twice as fast.">
<meta property="og:image" content="/img/og.png">
<link rel="stylesheet" href="/css/site.css">
<script src="/widget/intercom-loader.js" async></script>
</head>
<body>
<div id="consent-banner" class="cmp-banner" role="dialog">
  <p>Wir verwenden Cookies, um Ihr Erlebnis zu verbessern.</p>
  <button class="cmp-more">Einstellungen</button>
  <button class="cmp-accept">Alle akzeptieren</button>
</div>
<header class="hero">
  <h1>Ship widgets twice as fast</h1>
  <h2>The precision widget platform for modern teams</h2>
  <a class="cta" href="/signup?plan=pro">Start free trial</a>
  <a class="quiet" href="/pricing">Pricing</a>
</header>
<section class="features">
  <p>Cut assembly time in half. Trusted by 2,000 factories.</p>
  <video src="/media/demo.mp4" width="320" height="180" muted></video>
</section>
<section class="lazy">
  <div style="height:500px">Scroll down to see our customers</div>
  <!-- In view at one scroll position only (a viewport of 768 px scrolled 691 px at a time). -->
  <img id="lazy0" class="lazy" data-src="/img/lazy-0.png" alt="Award badge" width="120" height="60">
  <div style="height:1040px"></div>
  <img id="lazy1" class="lazy" data-src="/img/lazy-1.png" alt="Customer logo" width="120" height="60">
  <img id="lazy2" class="lazy" data-src="/img/lazy-2.png" alt="Customer logo" width="120" height="60">
</section>
<form action="/lead" method="post">
  <label for="name">Full name</label><input id="name" name="name">
  <label for="email">Work email</label><input id="email" name="email" type="email">
  <label>Company size <select name="size"><option>1-10</option><option>11-50</option></select></label>
  <input type="hidden" name="utm" value="x">
  <button type="submit">Get a demo</button>
</form>
<script>
  document.querySelector('.cmp-accept').addEventListener('click', () => document.getElementById('consent-banner').remove());
  const io = new IntersectionObserver((entries) => {
    for (const e of entries) if (e.isIntersecting) { e.target.src = e.target.dataset.src; io.unobserve(e.target); }
  });
  document.querySelectorAll('img.lazy').forEach((img) => io.observe(img));
</script>
</body></html>`;

const CSS = `body { font-family: "Georgia", serif; color: #222222; background: #ffffff; margin: 0; }
.hero { background: #0b3d91 url("/img/hero-bg.png") no-repeat; color: #ffffff; padding: 40px; font-family: "Trebuchet MS", sans-serif; }
.cta { display: inline-block; background: #ff6600; color: #ffffff; padding: 18px 42px; border-radius: 6px; font-size: 22px; text-decoration: none; }
.quiet { color: #ffffff; font-size: 12px; }
.cmp-banner { position: fixed; bottom: 0; left: 0; right: 0; background: #333333; color: #ffffff; padding: 20px; z-index: 10; }
form button { background: #0b3d91; color: #fff; padding: 8px 16px; }
`;

/**
 * A page whose fold depends on the viewport: a 100vh hero, a fixed header and a fixed chat button at
 * the bottom of the viewport, a sticky bar, sections below. Its fold as a user sees it is what the
 * capture's fold.png must show.
 */
const HERO = `<!doctype html><html><head><title>Hero</title><style>
body { margin: 0; font: 16px sans-serif; }
header { position: fixed; top: 0; left: 0; right: 0; height: 60px; background: #cc3333; color: #ffffff; z-index: 9; }
.hero { height: 100vh; background: linear-gradient(#112233, #99aabb); color: #ffffff; display: flex; align-items: center; justify-content: center; font-size: 40px; }
.sticky { position: sticky; top: 60px; height: 40px; background: #ffee00; }
.chat { position: fixed; bottom: 12px; right: 12px; width: 160px; height: 48px; border-radius: 24px; background: #2255ff; }
section { height: 900px; border-top: 1px solid #000000; }
</style></head><body><header>Hero Co</header><div class="hero">Widgets for everyone</div><div class="sticky">Offer ends soon</div><section>One</section><section>Two</section><div class="chat"></div></body></html>`;

export async function startLandingPages(options: { privateBaseUrl?: string } = {}): Promise<LandingPages> {
  const privateBase = options.privateBaseUrl ?? 'http://10.255.255.1';
  const counts = new Map<string, number>();
  const logs = new Map<string, { at: number; query: URLSearchParams }[]>();
  const holding = new Set<ServerResponse>();
  const images: Record<string, Buffer> = {
    '/img/og.png': png(40, 20, [200, 200, 200]),
    '/img/hero-bg.png': png(16, 16, [11, 61, 145]),
    '/img/lazy-0.png': png(120, 60, [160, 160, 0]),
    '/img/lazy-1.png': png(120, 60, [0, 160, 0]),
    '/img/lazy-2.png': png(120, 60, [160, 0, 160]),
  };
  const html = (res: ServerResponse, body: string, status = 200) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body);
  };
  const redirect = (res: ServerResponse, status: number, location: string) => {
    res.writeHead(status, { location });
    res.end();
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://pages');
    const path = url.pathname;
    const at = Date.now();
    counts.set(path, (counts.get(path) ?? 0) + 1);
    logs.set(path, [...(logs.get(path) ?? []), { at, query: url.searchParams }]);
    if (path === '/ad/click') return redirect(res, 302, '/ad/track?cid=42');
    if (path === '/ad/track') return redirect(res, 301, '/ad/hop');
    if (path === '/ad/hop')
      return html(
        res,
        '<!doctype html><html><head><meta http-equiv="refresh" content="0; url=/ad/js-hop"><title>Redirecting</title></head><body>Redirecting...</body></html>',
      );
    if (path === '/ad/js-hop')
      return html(
        res,
        '<!doctype html><html><head><title>One moment</title></head><body><script>setTimeout(() => location.replace("/landing?utm_source=ad"), 50);</script></body></html>',
      );
    if (path === '/landing') return html(res, LANDING);
    if (path === '/css/site.css') {
      res.writeHead(200, { 'content-type': 'text/css' });
      return res.end(CSS);
    }
    if (path === '/widget/intercom-loader.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' });
      return res.end('window.chatLoaded = true;');
    }
    const image = images[path];
    if (image) {
      res.writeHead(200, { 'content-type': 'image/png' });
      return res.end(image);
    }
    if (path === '/never-idle') {
      return html(
        res,
        '<!doctype html><html><head><title>Live ticker</title></head><body><h1>Prices update live</h1><script>fetch("/hold").catch(() => {}); setInterval(() => fetch("/ping?t=" + Date.now()).catch(() => {}), 100);</script></body></html>',
      );
    }
    if (path === '/stuck-image') {
      return html(
        res,
        '<!doctype html><html><head><title>Stuck</title></head><body><h1>An offer with a stuck image</h1><img src="/hold?image=1" alt="never"></body></html>',
      );
    }
    if (path === '/hold') {
      // A request the server never answers (a stream that sends nothing): open until the client hangs up.
      holding.add(res);
      res.on('close', () => holding.delete(res));
      return;
    }
    if (path === '/ping') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('pong');
    }
    if (path === '/crash') {
      // Allocates until V8 gives up: Chromium kills the renderer (the page's "Aw, Snap"), as a runaway page script does.
      return html(
        res,
        '<!doctype html><html><head><title>Heavy page</title></head><body><h1>This page eats memory</h1><script>setTimeout(() => { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); }, 200);</script></body></html>',
      );
    }
    if (path === '/crash-on-screenshot') {
      // Quiet until the screenshot: taking one ends the page's CSS animations (animations:
      // 'disabled'), and the animation's end starts the same runaway allocation, so the renderer dies
      // after navigation, popups, scrolling and the reading are done.
      return html(
        res,
        '<!doctype html><html><head><title>Late crash</title><style>@keyframes spin { to { transform: rotate(360deg); } } #s { animation: spin 1000s 1; }</style></head><body><h1 id="s">This page dies on camera</h1><script>document.getElementById("s").addEventListener("animationend", () => { const a = []; for (;;) a.push(new Array(1e6).fill(1.5)); });</script></body></html>',
      );
    }
    const loop = /^\/loop\/(\d+)$/.exec(path);
    if (loop) return redirect(res, 302, `/loop/${Number(loop[1]) + 1}`);
    if (path === '/ad/to-private') return redirect(res, 302, `${privateBase}/landing`);
    if (path === '/sneaky') {
      return html(
        res,
        `<!doctype html><html><head><title>Sneaky</title><link rel="stylesheet" href="${privateBase}/x.css"></head><body><h1>Offer</h1><img src="${privateBase}/pixel.png"><script>fetch("${privateBase}/beacon").catch(() => {})</script></body></html>`,
      );
    }
    if (path === '/hero') return html(res, HERO);
    if (path === '/late/busy' || path === '/late/timer') {
      const show =
        'fetch("/late/offer").then((r) => r.text()).then((t) => { document.getElementById("offer").textContent = t; })';
      const start =
        path === '/late/busy'
          ? `const t0 = performance.now(); while (performance.now() - t0 < 400) {} ${show};`
          : `setTimeout(() => ${show}, 150);`;
      return html(
        res,
        `<!doctype html><html><head><title>Late offer</title></head><body><h1>Our offer</h1><p id="offer">Loading...</p><script>addEventListener("load", () => { ${start} });</script></body></html>`,
      );
    }
    if (path === '/late/consent') {
      // A consent banner shown on a chain of two timers after load (90 ms, then 90 ms more): no request
      // announces it, so only the page's timers tell the settle that something is coming.
      const banner =
        'const b = document.createElement("div"); b.id = "late-banner"; b.innerHTML = "<p>We use cookies to improve your visit.</p><button>Accept all</button>"; b.querySelector("button").addEventListener("click", () => { b.remove(); document.body.insertAdjacentHTML("beforeend", "<p>Your cookie choice is saved.</p>"); }); document.body.appendChild(b);';
      return html(
        res,
        `<!doctype html><html><head><title>Late banner</title></head><body><h1>Spring sale</h1><p>Everything in the shop is 20% off until Sunday, with free delivery on every order.</p><script>addEventListener("load", () => setTimeout(() => setTimeout(() => { ${banner} }, 90), 90));</script></body></html>`,
      );
    }
    if (path === '/late/offer') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      return res.end('Offer ends Friday');
    }
    if (path === '/many-slow') {
      const imgs = Array.from({ length: 16 }, (_, i) => `<img src="/slow/${i}.png" width="40" height="20">`).join('');
      return html(
        res,
        `<!doctype html><html><head><title>Gallery</title></head><body><h1>Our work</h1>${imgs}</body></html>`,
      );
    }
    if (/^\/slow\/\d+\.png$/.test(path)) {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'image/png' });
        res.end(images['/img/og.png']);
      }, 400);
      return;
    }
    if (path === '/plain')
      return html(
        res,
        '<!doctype html><html><head><title>Plain</title><style>body{font-family:sans-serif}</style></head><body><h1>Plain offer</h1><p>Buy now.</p><a href="/buy" style="background:#f60;color:#fff;padding:10px">Buy</a></body></html>',
      );
    res.writeHead(404, { 'content-type': 'text/plain' });
    res.end('not found');
  });
  const { baseUrl, close } = await listenLocal(server);
  return {
    baseUrl,
    count: (p) => counts.get(p) ?? 0,
    log: (p) => [...(logs.get(p) ?? [])],
    held: () => holding.size,
    close,
  };
}
