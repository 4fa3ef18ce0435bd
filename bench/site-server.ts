/**
 * The generated website of bench/site: `tsx bench/site-server.ts <pages> <latency-ms>` serves
 * `pages` pages on 127.0.0.1 (a tree: page n links pages 10n+1 ... 10n+10, plus a shared menu)
 * and prints its base URL. Each page is about 12 KB of ordinary company-site HTML: header, menu,
 * paragraphs, a contact block with an email and a phone, a footer. `latency-ms` delays every
 * answer, as a real server's think time and round trip would.
 */
import { createServer } from 'node:http';

const pages = Number(process.argv[2] ?? 1000);
const latencyMs = Number(process.argv[3] ?? 0);

const PARAGRAPH =
  'Our engineers design, build and certify precision widgets for manufacturers across Europe. Every order is assembled in our Manchester works, tested twice and shipped within five working days. ';
const path = (n: number) => (n === 0 ? '/' : `/p/${n}`);

function page(n: number): string {
  const children = Array.from({ length: 10 }, (_, i) => n * 10 + i + 1).filter((c) => c < pages);
  const menu = [0, 1, 2, 3, 4, 5].map((m) => `<li><a href="${path(m)}">Section ${m}</a></li>`).join('');
  const body = Array.from({ length: 30 }, (_, i) => `<p>${PARAGRAPH}Paragraph ${i} of page ${n}.</p>`).join('\n');
  return `<!doctype html><html lang="en-GB"><head><meta charset="utf-8"><title>Page ${n} | Bench Widgets</title>
<meta name="description" content="Page ${n} of the bench site"></head><body>
<header><img class="logo" src="/logo.png" alt="logo"><nav><ul>${menu}</ul></nav></header>
<main><h1>Page ${n}</h1>${body}
<h2>More</h2><ul>${children.map((c) => `<li><a href="${path(c)}">Page ${c}</a></li>`).join('')}</ul>
<div class="contact"><p>Write to team${n}@bench-widgets.co.uk or call 0161 496 ${String(1000 + (n % 9000)).padStart(4, '0')}.</p></div></main>
<footer><p>Bench Widgets Ltd, 1 Mill Lane, Manchester M1 1AA</p><a href="https://www.linkedin.com/company/bench-widgets">LinkedIn</a></footer>
</body></html>`;
}

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  const n = url === '/' ? 0 : Number(/^\/p\/(\d+)$/.exec(url)?.[1] ?? NaN);
  const send = () => {
    if (!Number.isInteger(n) || n < 0 || n >= pages)
      return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page(n));
  };
  if (latencyMs > 0) setTimeout(send, latencyMs);
  else send();
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  process.stdout.write(`http://127.0.0.1:${address.port}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
