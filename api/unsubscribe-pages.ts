import escapeHtml from 'escape-html';

/**
 * The HTML of the public unsubscribe pages (`/u/{token}`, spec §4.12). Every value that comes from a
 * token or a request is escaped; the pages load nothing (no scripts, no external styles) and their
 * Content-Security-Policy says so.
 */

/** Headers of every page: no caching of a capability URL, no referrer carrying it elsewhere, no framing. */
export const PAGE_HEADERS: Record<string, string> = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Robots-Tag': 'noindex, nofollow',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const STYLE = `
  body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: #f5f5f4; color: #1c1917; margin: 0; }
  main { max-width: 34rem; margin: 4rem auto; background: #fff; padding: 2rem 2.25rem; border-radius: 0.75rem; box-shadow: 0 1px 3px rgba(0,0,0,.12); }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  p { line-height: 1.5; }
  .email { font-weight: 600; word-break: break-all; }
  form { display: flex; flex-direction: column; gap: 0.75rem; margin-top: 1.5rem; }
  button { font: inherit; padding: 0.7rem 1rem; border-radius: 0.5rem; border: 1px solid #a8a29e; background: #fff; cursor: pointer; }
  button.primary { background: #1c1917; color: #fff; border-color: #1c1917; }
`;

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

/** GET: asks; changes nothing. The form posts back to the same address (the token is in it). */
export function confirmPage(email: string, list: string): string {
  return page(
    'Unsubscribe',
    `<h1>Unsubscribe</h1>
<p>Stop sending <span class="email" id="email">${escapeHtml(email)}</span> mail from the list <strong id="list">${escapeHtml(list)}</strong>?</p>
<form method="post">
  <button class="primary" type="submit" name="scope" value="list">Unsubscribe from ${escapeHtml(list)}</button>
  <button type="submit" name="scope" value="all">Unsubscribe from all mailing lists</button>
</form>`,
  );
}

/** POST: done (also on a repeat, which changes nothing). */
export function donePage(email: string, list: string, scope: 'list' | 'all'): string {
  const what = scope === 'all' ? 'all mailing lists' : `the list <strong>${escapeHtml(list)}</strong>`;
  return page(
    'Unsubscribed',
    `<h1>You are unsubscribed</h1>
<p id="result" data-scope="${scope}"><span class="email">${escapeHtml(email)}</span> will no longer receive mail from ${what}.</p>`,
  );
}

/** 422: the token is malformed, tampered with or from another key; or the form asked for something unknown. */
export function invalidPage(reason: string): string {
  return page(
    'Invalid unsubscribe link',
    `<h1>This unsubscribe link is not valid</h1>
<p id="reason">${escapeHtml(reason)}</p>
<p>Copy the whole link from the mail, or use the unsubscribe link of a newer mail.</p>`,
  );
}
