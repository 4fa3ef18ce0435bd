import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A small company website on 127.0.0.1 for the crawlSite tests, in the shapes real sites use:
 * robots.txt (with a disallowed /private/), sitemap.xml, a 301/302 redirect chain, a redirect to
 * a cloud-metadata address, contact details written plainly, obfuscated and behind Cloudflare's
 * email protection, phones in British, German and US formats, JSON-LD Organization and Person, a
 * team page, a Latin-1 imprint, a page whose content only scripts build, one whose script
 * navigates to another page, links and a redirect to very long URLs, and (mode `slow`) an endless
 * site whose pages each take 300 ms. `robotsTxt` replaces the robots.txt. Every request is counted
 * per path, with its time.
 */
export interface Website {
  baseUrl: string;
  /** Requests per path (query included). */
  count(path: string): number;
  total(): number;
  /** Time of the latest request (ms since epoch), 0 before any. */
  lastRequestAt(): number;
  /** How many requests arrived at or after `at` (ms since epoch). */
  arrivedSince(at: number): number;
  userAgents: Set<string>;
  close(): Promise<void>;
}

export const CF_KEY = 0x3b;
/** Cloudflare's encoding: a key byte, then every character XORed with it, as hex. */
export function cfEncode(email: string, key = CF_KEY): string {
  return (
    key.toString(16).padStart(2, '0') +
    [...email].map((c) => (c.charCodeAt(0) ^ key).toString(16).padStart(2, '0')).join('')
  );
}

const layout = (title: string, body: string, head = '') => `<!doctype html>
<html lang="en-GB"><head><meta charset="utf-8"><title>${title}</title>${head}</head>
<body>
<header><a href="/"><img class="site-logo" src="/img/logo.png" alt="Acme Widgets logo"></a>
<nav><a href="/">Home</a> <a href="/about/">About</a> <a href="/services">Services</a> <a href="/team">Team</a> <a href="/contact#form">Contact</a> <a href="/private/hidden-page">Staff only</a></nav></header>
<div id="cookie-consent">We use cookies to improve your experience. <button>Accept</button></div>
${body}
<footer><p>Acme Widgets Ltd is registered in England and Wales. Company number 01234567.</p>
<p><a href="https://www.facebook.com/sharer/sharer.php?u=https%3A%2F%2Facme-widgets.co.uk">Share on Facebook</a>
<a href="https://twitter.com/intent/tweet?text=Acme">Tweet</a>
<a href="https://www.facebook.com/acmewidgets">Facebook</a> <a href="https://www.instagram.com/acmewidgets/">Instagram</a>
<a href="https://www.youtube.com/@acmewidgets">YouTube</a> <a href="https://github.com/acme-widgets">GitHub</a></p></footer>
</body></html>`;

const ORG_LD = JSON.stringify({
  '@context': 'https://schema.org',
  '@type': 'Organization',
  name: 'Acme Widgets Ltd',
  description: 'Precision widgets for manufacturers since 1901.',
  industry: 'Industrial manufacturing',
  logo: 'https://acme-widgets.co.uk/img/logo.png',
  address: {
    '@type': 'PostalAddress',
    streetAddress: '1 Mill Lane',
    postalCode: 'M1 1AA',
    addressLocality: 'Manchester',
    addressCountry: 'GB',
  },
  sameAs: ['https://www.linkedin.com/company/acme-widgets', 'https://twitter.com/acmewidgets'],
  audience: { '@type': 'BusinessAudience', audienceType: 'Manufacturers and engineering firms' },
});

const PERSON_LD = JSON.stringify({
  '@context': 'https://schema.org',
  '@type': 'Person',
  name: 'Ada Lovelace',
  jobTitle: 'Chief Technology Officer',
  email: 'ada@acme-widgets.co.uk',
  sameAs: ['https://www.linkedin.com/in/ada-lovelace'],
  image: '/img/ada.jpg',
});

function pages(
  base: string,
): Record<string, () => { status?: number; type?: string; body: string | Buffer; headers?: Record<string, string> }> {
  return {
    '/robots.txt': () => ({
      type: 'text/plain',
      body: `User-agent: *\nDisallow: /private/\n\nUser-agent: BadBot\nDisallow: /\n\nSitemap: ${base}/sitemap.xml\n`,
    }),
    '/sitemap.xml': () => ({
      type: 'application/xml',
      body: `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${[
        '/',
        '/services',
        '/news',
        '/private/secret',
        '/impressum',
        '/old-crew',
        '/js-only',
      ]
        .map((p) => `<url><loc>${base}${p}</loc></url>`)
        .join('')}</urlset>`,
    }),
    '/': () => ({
      body: layout(
        'Acme Widgets Ltd | Precision widgets',
        `<main><h1>Precision widgets since 1901</h1>
<p>Call our Manchester office on 0161 496 0123.</p>
<p>Download our <a href="/files/brochure.pdf">brochure</a>, read the <a href="/news?utm_source=home">news</a> or see our
<a href="/index.html">home page</a> again. Partners: <a href="https://partner.example.org/">Partner</a>. <a href="/go-private">Status</a></p>
<img src="/img/hero@2x.png" alt="hero"></main>`,
        `<meta name="description" content="Widgets for the trade"><meta property="og:site_name" content="Acme Widgets"><script type="application/ld+json">${ORG_LD}</script>`,
      ),
    }),
    '/about': () => ({
      body: layout(
        'About us | Acme Widgets',
        `<main><h1>About Acme Widgets</h1><p>Four generations of widget makers in Manchester.</p><p>Meet <a href="/team">our team</a>.</p></main>`,
      ),
    }),
    '/contact': () => ({
      body: layout(
        'Contact | Acme Widgets',
        `<main><h1>Contact us</h1>
<p>Sales: sales [at] acme-widgets [dot] co [dot] uk</p>
<p>Support: <a href="/cdn-cgi/l/email-protection#${cfEncode('support@acme-widgets.co.uk')}"><span class="__cf_email__" data-cfemail="${cfEncode('support@acme-widgets.co.uk')}">[email&#160;protected]</span></a></p>
<p>Press: <a href="mailto:Press@Acme-Widgets.co.uk?subject=Hello">press office</a></p>
<p>Berlin office: +49 30 901820 · New York office: +1 (415) 555-2671 · Freephone <a href="tel:08081570192">0808 157 0192</a></p>
<p>Your address, e.g. you@example.com, never leaves this site.</p>
<address>1 Mill Lane<br>Manchester M1 1AA</address></main>`,
      ),
    }),
    '/team': () => ({
      body: layout(
        'Our team | Acme Widgets',
        `<main><h1>Meet the team</h1><div class="team">
<div class="member"><img src="/img/grace.jpg" alt=""><h3>Grace Hopper</h3><p class="role">Head of Engineering</p>
<a href="mailto:grace@acme-widgets.co.uk">Email Grace</a> <a href="https://uk.linkedin.com/in/grace-hopper/">LinkedIn</a></div>
<div class="member"><img src="/img/alan.jpg" alt=""><h3>Alan Turing</h3><p>Research Lead</p></div>
<div class="member"><img src="/img/ada.jpg" alt=""><h3>Ada Lovelace</h3><p>Chief Technology Officer</p></div>
</div></main>`,
        `<script type="application/ld+json">${PERSON_LD}</script>`,
      ),
    }),
    '/services': () => ({
      body: layout(
        'Services | Acme Widgets',
        `<main><h1>Services</h1><h2>Custom widget design</h2><p>From sketch to series.</p><h2>Widget repair</h2><p>Any make.</p><h2>Certification</h2><p>ISO 9001.</p></main>`,
      ),
    }),
    // Latin-1, declared only in the Content-Type header.
    '/impressum': () => ({
      type: 'text/html; charset=iso-8859-1',
      body: Buffer.from(
        layout(
          'Impressum | Acme Widgets',
          `<main><h1>Impressum</h1><p>Geschäftsführer: Jürgen Müller</p><p>Telefon: +49 30 901820</p></main>`,
        ),
        'latin1',
      ),
    }),
    '/news': () => ({ status: 301, body: '', headers: { location: '/blog/widget-news' } }),
    '/blog/widget-news': () => ({
      body: layout('News | Acme Widgets', `<main><h1>New widget line</h1><p>The W-200 ships in March.</p></main>`),
    }),
    '/old-crew': () => ({ status: 301, body: '', headers: { location: `${base}/crew-2019` } }),
    '/crew-2019': () => ({ status: 302, body: '', headers: { location: '/team' } }),
    '/go-private': () => ({ status: 302, body: '', headers: { location: 'http://169.254.169.254/latest/meta-data/' } }),
    '/private/secret': () => ({ body: layout('Secret', '<main><p>secret@acme-widgets.co.uk</p></main>') }),
    '/private/hidden-page': () => ({ body: layout('Hidden', '<main><p>hidden@acme-widgets.co.uk</p></main>') }),
    '/files/brochure.pdf': () => ({ type: 'application/pdf', body: '%PDF-1.4' }),
    // Content that exists only after scripts ran; the script also tries to reach addresses the guard refuses.
    '/js-only': () => ({
      body: `<!doctype html><html lang="en-GB"><head><title>Careers | Acme Widgets</title></head><body><main id="app">Loading…</main>
<script>
fetch('/api/careers.json').then((r) => r.json()).then((d) => {
  document.getElementById('app').innerHTML = '<h1>Careers</h1><p>Apply at <a href="mailto:' + d.email + '">' + d.email + '</a> or call ' + d.phone + '</p>';
});
var probe = document.createElement('p'); probe.id = 'probe'; document.body.appendChild(probe);
fetch(new URLSearchParams(location.search).get('probe') || 'http://10.0.0.1/').then(() => { probe.textContent = 'probe reached'; }, () => { probe.textContent = 'probe refused'; });
</script></body></html>`,
    }),
    // A page whose script moves the browser on to /team (render_js), and a page linking to it; nothing else links to either.
    '/history': () => ({
      body: `<!doctype html><html lang="en-GB"><head><title>History | Acme Widgets</title></head><body><p>Meet <a href="/crew-js">the crew of 2019</a>.</p></body></html>`,
    }),
    '/crew-js': () => ({
      body: `<!doctype html><html lang="en-GB"><head><title>Crew 2019 | Acme Widgets</title><script>location.replace('/team');</script></head><body><p>Moved to <a href="/team">our team</a>.</p></body></html>`,
    }),
    '/api/careers.json': () => ({
      type: 'application/json',
      body: JSON.stringify({ email: 'jobs@acme-widgets.co.uk', phone: '0161 496 0999' }),
    }),
    '/img/logo.png': () => ({ type: 'image/png', body: Buffer.alloc(8) }),
    // Links to pages with 1,990-character paths, the longest a crawl takes on this host, and to one of 2,100 (and a redirect there).
    '/long-links': () => ({
      body: layout(
        'Archive | Acme Widgets',
        `<main><h1>Archive</h1>${[...LONG_PATHS, TOO_LONG_PATH, '/long-redirect'].map((p, i) => `<a href="${p}">entry ${i}</a>`).join(' ')}</main>`,
      ),
    }),
    '/long-redirect': () => ({ status: 302, body: '', headers: { location: TOO_LONG_PATH } }),
  };
}

export const LONG_PATHS = Array.from({ length: 6 }, (_, i) => `/long/${i}-${'a'.repeat(1982)}`);
export const TOO_LONG_PATH = `/long/x-${'a'.repeat(2092)}`;

export async function startWebsite(
  options: { mode?: 'site' | 'slow'; pageDelayMs?: number; robotsTxt?: string } = {},
): Promise<Website> {
  const counts = new Map<string, number>();
  const userAgents = new Set<string>();
  let last = 0;
  const arrivals: number[] = [];
  let base = '';
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = req.url ?? '/';
    counts.set(path, (counts.get(path) ?? 0) + 1);
    last = Date.now();
    arrivals.push(last);
    userAgents.add(String(req.headers['user-agent']));
    // /about/ and /about are one page, as on most servers.
    const pathname = new URL(path, base).pathname.replace(/(.)\/$/, '$1');

    if (options.mode === 'slow') {
      // An endless site: every page links five new ones and takes its time to answer.
      if (pathname === '/robots.txt' || pathname === '/sitemap.xml') return void res.writeHead(404).end();
      const n = Number(/^\/p\/(\d+)$/.exec(pathname)?.[1] ?? 0);
      const links = Array.from({ length: 5 }, (_, i) => `<a href="/p/${n * 5 + i + 1}">page ${n * 5 + i + 1}</a>`).join(
        ' ',
      );
      setTimeout(
        () =>
          res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(`<html><body><h1>Page ${n}</h1>${links}</body></html>`),
        options.pageDelayMs ?? 300,
      );
      return;
    }
    if (pathname === '/hang') return; // never answers: the page timeout must fire
    if (pathname === '/robots.txt' && options.robotsTxt !== undefined)
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end(options.robotsTxt);
    if (pathname.startsWith('/long/'))
      return void res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(`<html><head><title>Entry ${pathname.slice(6, 7)}</title></head><body><p>An old entry.</p></body></html>`);
    const page = pages(base)[pathname === '/index.html' ? '/' : pathname];
    if (!page)
      return void res
        .writeHead(404, { 'content-type': 'text/html' })
        .end('<html><body><h1>Not found</h1></body></html>');
    const { status = 200, type = 'text/html; charset=utf-8', body, headers = {} } = page();
    res.writeHead(status, { 'content-type': type, ...headers }).end(body);
  };
  const listening = await listenLocal(createServer(handle));
  base = listening.baseUrl;
  return {
    baseUrl: base,
    count: (path) => counts.get(path) ?? 0,
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    lastRequestAt: () => last,
    arrivedSince: (at) => arrivals.filter((t) => t >= at).length,
    userAgents,
    close: listening.close,
  };
}
