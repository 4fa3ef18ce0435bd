/**
 * Scripts that run inside the captured page (page.evaluate). They are plain JavaScript strings:
 * this project compiles without the DOM library, and the code runs in Chromium, not in Node.
 */

/**
 * Buttons of the common consent frameworks: OneTrust, Cookiebot, Quantcast Choice, Didomi,
 * CookieYes, TrustArc, Usercentrics, Osano, HubSpot, Complianz, Borlabs, cookieconsent (Osano's
 * open-source banner), Klaro, Iubenda, Termly, Axeptio, Sourcepoint's first layer.
 */
export const CONSENT_SELECTORS = [
  '#onetrust-accept-btn-handler',
  '#accept-recommended-btn-handler',
  '#CybotCookiebotDialogBodyLevelButtonLevelOptinAllowAll',
  '#CybotCookiebotDialogBodyButtonAccept',
  '.qc-cmp2-summary-buttons button[mode="primary"]',
  '#didomi-notice-agree-button',
  '.cky-btn-accept',
  '#truste-consent-button',
  '[data-testid="uc-accept-all-button"]',
  '.osano-cm-accept-all',
  '#hs-eu-confirmation-button',
  '.cmplz-accept',
  '[data-cookie-accept-all]',
  '.cc-allow',
  '.cc-dismiss',
  '.klaro .cm-btn-accept-all',
  '.iubenda-cs-accept-btn',
  '[data-tid="banner-accept"]',
  '#axeptio_btn_acceptAll',
  'button[title="Accept all"]',
];

/**
 * Whole button texts that accept, in English, German, French, Spanish, Italian, Portuguese, Dutch,
 * Swedish, Danish, Norwegian, Polish and Czech. Matched whole (trimmed, case-insensitive), so that
 * "Accept only necessary" or a "Learn more about cookies" link is never clicked.
 */
export const ACCEPT_TEXTS = [
  'accept',
  'accept all',
  'accept all cookies',
  'accept cookies',
  'i accept',
  'agree',
  'i agree',
  'agree and close',
  'allow',
  'allow all',
  'allow all cookies',
  'allow cookies',
  'ok',
  'got it',
  'yes, i agree',
  'akzeptieren',
  'alle akzeptieren',
  'alle cookies akzeptieren',
  'zustimmen',
  'allen zustimmen',
  'einverstanden',
  'alle zulassen',
  'ich stimme zu',
  'accepter',
  'tout accepter',
  "j'accepte",
  'accepter et fermer',
  "d'accord",
  'autoriser tous les cookies',
  'aceptar',
  'aceptar todo',
  'aceptar todas',
  'aceptar cookies',
  'acepto',
  'accetta',
  'accetta tutto',
  'accetta tutti',
  'accetto',
  'aceitar',
  'aceitar todos',
  'aceito',
  'concordo',
  'accepteren',
  'alles accepteren',
  'akkoord',
  'alle cookies toestaan',
  'godkänn',
  'godkänn alla',
  'acceptera',
  'acceptera alla',
  'accepter alle',
  'tillad alle',
  'godta alle',
  'godta',
  'zaakceptuj',
  'akceptuję',
  'zgadzam się',
  'akceptuj wszystkie',
  'přijmout',
  'přijmout vše',
  'souhlasím',
];

/**
 * Clicks the first visible accept button (framework selector first, then text) and returns what it
 * clicked, or null. After a click it waits for the banner to go: until the button is removed or
 * hidden (most banners) or `settleMs` has passed (a fade-out), then one more frame so the screenshot
 * sees the page without it. With nothing to click it returns at once.
 */
export const DISMISS_CONSENT = `(async ({ selectors, texts, settleMs }) => {
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none' && Number(s.opacity) > 0;
  };
  // A rendered frame (rAF, then the tasks it queued); a timer in case the page renders no frames.
  const frame = () => new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); setTimeout(resolve, 50); });
  const settle = async (el, what) => {
    const until = performance.now() + settleMs;
    while (performance.now() < until && el.isConnected && visible(el)) await frame();
    await frame();
    return what;
  };
  const roots = [document];
  for (const el of document.querySelectorAll('*')) if (el.shadowRoot) roots.push(el.shadowRoot);
  for (const root of roots) {
    for (const sel of selectors) {
      const el = root.querySelector(sel);
      if (el && visible(el)) { el.click(); return settle(el, 'selector ' + sel); }
    }
  }
  const wanted = new Set(texts);
  for (const root of roots) {
    for (const el of root.querySelectorAll('button, [role="button"], a, input[type="button"], input[type="submit"]')) {
      const text = (el.value || el.innerText || el.textContent || '').replace(/\\s+/g, ' ').trim().toLowerCase();
      if (text.length <= 40 && wanted.has(text) && visible(el)) { el.click(); return settle(el, 'text "' + text + '"'); }
    }
  }
  return null;
})`;

/** The delay (s) of the page's meta refresh, or null when it has none. */
export const META_REFRESH_DELAY = `(() => {
  const m = document.querySelector('meta[http-equiv="refresh" i]');
  const delay = m ? parseFloat(m.getAttribute('content') || '') : NaN;
  return Number.isFinite(delay) && delay >= 0 ? delay : null;
})()`;

/**
 * Whether the page looks like a redirect interstitial: little visible text and an inline script that
 * assigns the location (location.replace/assign, location.href =, window.location =). Tracking hops
 * are such pages; a landing page with a script that merely reads location is not (it has text).
 */
export const SCRIPT_REDIRECT_LIKELY = `(() => {
  const text = (document.body ? document.body.innerText || document.body.textContent || '' : '').trim();
  if (text.length > 400) return false;
  const assigns = /(location\\s*\\.\\s*(replace|assign)\\s*\\(|location\\s*\\.\\s*href\\s*=[^=]|(window|document|self|top)\\s*\\.\\s*location\\s*=[^=])/;
  return Array.from(document.scripts).some((s) => !s.src && assigns.test(s.textContent || ''));
})()`;

/**
 * Resolves once the page's main thread has nothing to run (requestIdleCallback: the scripts that ran
 * after load, their tasks and a frame to render are done), at most `ms` later on a page that is never
 * idle. A script still busy when the network went quiet fires its requests before this resolves.
 */
export const MAIN_THREAD_IDLE = (ms: number) =>
  `new Promise((resolve) => typeof requestIdleCallback === 'function' ? requestIdleCallback(() => resolve(), { timeout: ${ms} }) : setTimeout(resolve, 0))`;

// The property of the page's window under which TIMER_WATCH leaves its wait (a symbol: no page
// script reads it by chance, and it is not enumerable).
const TIMERS_KEY = `Symbol.for('leadjobs.timersDue')`;
// More live timers than this and the watch stops recording: the wait then takes its whole horizon.
const TIMER_WATCH_MAX = 10_000;

/**
 * Installed in every document of a capture's context before the page's own scripts
 * (context.addInitScript): records each live timer (setTimeout, setInterval; cleared ones dropped),
 * when it is due and whether its callback has run, so that the settle waits for the timers about to
 * fire rather than for a fixed quiet time. The page's functions are wrapped in Proxies, which stay
 * what they were to any check a script makes (name, length, toString). The wait itself,
 * `window[TIMERS_KEY](ms)`, resolves once every timeout due within `ms` of the call has run (one
 * that is overdue on a busy renderer, too: its callback may set the next timer of a chain), and
 * each interval has ticked once since the call, counting timers set meanwhile as long as they are
 * due within the same `ms`; at most twice `ms` on a renderer too busy to run them. A timer given
 * code as a string is taken to have run once it is due. The wait sleeps on the page's original
 * setTimeout, so it does not wait for itself.
 */
export const TIMER_WATCH = `(() => {
  const w = window;
  const key = ${TIMERS_KEY};
  if (w[key] || typeof w.setTimeout !== 'function') return;
  const now = () => performance.now();
  const sleep = w.setTimeout.bind(w);
  // id -> { at: when it is first due, every: an interval's period (0: a timeout), ran: when its
  // callback last ran (0: never), blind: a code string (whether it ran is not known) }. A timeout
  // that has run is dropped.
  const live = new Map();
  let overflow = false;
  const prune = () => {
    const t = now();
    for (const [id, timer] of live) if (timer.blind && !timer.every && timer.at < t) live.delete(id);
    if (live.size > ${TIMER_WATCH_MAX}) { overflow = true; live.clear(); }
  };
  const watch = (name, repeat) => {
    w[name] = new Proxy(w[name], {
      apply(target, self, args) {
        if (overflow) return Reflect.apply(target, self, args);
        const delay = Math.max(0, Number(args[1]) || 0);
        const timer = { at: now() + delay, every: repeat ? Math.max(delay, 1) : 0, ran: 0, blind: typeof args[0] !== 'function' };
        let id;
        if (!timer.blind) {
          const callback = args[0];
          args = [function (...a) {
            timer.ran = now();
            if (!repeat) live.delete(id);
            return Reflect.apply(callback, this, a);
          }, ...args.slice(1)];
        }
        id = Reflect.apply(target, self, args);
        live.set(id, timer);
        if (live.size > ${TIMER_WATCH_MAX}) prune();
        return id;
      },
    });
  };
  const unwatch = (name) => {
    w[name] = new Proxy(w[name], {
      apply(target, self, args) {
        live.delete(args[0]);
        return Reflect.apply(target, self, args);
      },
    });
  };
  watch('setTimeout', false);
  watch('setInterval', true);
  // Timeouts and intervals share one list of ids: either function clears either.
  unwatch('clearTimeout');
  unwatch('clearInterval');
  Object.defineProperty(w, key, {
    value: async (ms) => {
      const start = now();
      const until = start + ms;
      for (;;) {
        if (overflow) return new Promise((resolve) => sleep(resolve, Math.max(0, until - now())));
        const t = now();
        if (t > until + ms) return;
        let last = -1;
        let overdue = false;
        for (const timer of live.values()) {
          let due = timer.at;
          if (timer.every) {
            if (timer.ran >= start) continue;
            // Its first tick since the wait began.
            due = timer.at + Math.ceil(Math.max(0, start - timer.at) / timer.every) * timer.every;
          }
          if (due > until || (timer.blind && due <= t)) continue;
          if (due <= t) overdue = true;
          else if (due > last) last = due;
        }
        if (last < 0 && !overdue) return;
        // An overdue timer runs before a new one of no delay: the check after it sees what it started.
        await new Promise((resolve) => sleep(resolve, overdue ? 0 : last - t + 1));
      }
    },
  });
})()`;

/** Waits for the timers due within `ms` (TIMER_WATCH); on a page the watch is not in, `ms` whatever is due. */
export const TIMERS_DUE = (ms: number) =>
  `(typeof window[${TIMERS_KEY}] === 'function' ? window[${TIMERS_KEY}](${ms}) : new Promise((resolve) => setTimeout(resolve, ${ms})))`;

/** Both hints of a pending hop in one call: the meta refresh's delay and whether a script hop is likely. */
export const HOP_HINTS = `({ refresh: ${META_REFRESH_DELAY}, scriptHop: ${SCRIPT_REDIRECT_LIKELY} })`;

/**
 * Scrolls down most of a viewport at a time to the bottom (lazy images and infinite sections load),
 * one rendered frame per step (the frame that scrolled a target in computes its IntersectionObserver
 * entry; the callback that starts its image runs in a task after it, even once the scroll has moved
 * on), then back to the top, two frames there (the last position's callbacks run). A
 * page no taller than its viewport is not scrolled. Returns the number of steps.
 */
export const SCROLL_FOR_LAZY = `(async ({ maxSteps, limitMs }) => {
  const frame = () => new Promise((resolve) => { requestAnimationFrame(() => setTimeout(resolve, 0)); setTimeout(resolve, 50); });
  const until = performance.now() + limitMs;
  let steps = 0;
  while (steps < maxSteps && performance.now() < until) {
    const before = window.scrollY;
    window.scrollBy(0, Math.max(200, Math.floor(window.innerHeight * 0.9)));
    if (window.scrollY === before) break;
    steps += 1;
    // One rendered frame per position: its rendering step computes the IntersectionObservers at this
    // position and queues their callbacks, which run (and start their images) whatever comes next.
    await frame();
    if (window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 2) break;
  }
  if (steps > 0) {
    window.scrollTo(0, 0);
    // The page's own scroll handlers (a header that changes once scrolled) see the return to the top.
    await frame();
    await frame();
  }
  return steps;
})`;

/**
 * The rendered page's HTML for the bundle (serialized as page.content() does), from a copy of the
 * document in which every image points at what it shows (lazy loaders swap data-src in; srcset picks
 * a candidate): the page itself is left as it is, so the screenshots may come after it.
 */
export const SNAPSHOT_HTML = `(() => {
  const live = [...document.querySelectorAll('img')];
  const copy = document.documentElement.cloneNode(true);
  copy.querySelectorAll('img').forEach((img, i) => {
    const shown = live[i] && live[i].currentSrc;
    if (shown) img.setAttribute('src', shown);
    img.removeAttribute('srcset');
    img.removeAttribute('loading');
  });
  for (const source of copy.querySelectorAll('picture source')) source.remove();
  return (document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '') + copy.outerHTML;
})`;

/**
 * What the DOM and computed styles say deterministically: meta, headings, the most prominent
 * button, colours, fonts, video, chat widgets, form fields, and the visible text for the LLM.
 */
export const READ_PAGE = `(() => {
  const text = (el) => (el ? (el.innerText || el.textContent || '').replace(/\\s+/g, ' ').trim() : '');
  const meta = (sel) => { const el = document.querySelector(sel); const v = el && el.getAttribute('content'); return v && v.trim() ? v.trim() : null; };
  const visible = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el); return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const abs = (u) => { try { return u ? new URL(u, location.href).href : null; } catch { return null; } };
  const toHex = (c) => {
    const m = /^rgba?\\((\\d+),\\s*(\\d+),\\s*(\\d+)(?:,\\s*([\\d.]+))?\\)$/.exec(c || '');
    if (!m || (m[4] !== undefined && Number(m[4]) < 0.5)) return null;
    return '#' + [m[1], m[2], m[3]].map((n) => Number(n).toString(16).padStart(2, '0')).join('');
  };

  const h1 = [...document.querySelectorAll('h1')].filter(visible).map(text).filter(Boolean);
  const h2 = [...document.querySelectorAll('h2')].filter(visible).map(text).filter(Boolean);

  // The most prominent call to action: the largest visible button or button-like link above the fold first.
  const candidates = [...document.querySelectorAll('button, a[href], input[type="submit"], [role="button"]')].filter(visible).map((el) => {
    const r = el.getBoundingClientRect();
    const s = getComputedStyle(el);
    const bg = toHex(s.backgroundColor);
    const label = (el.value || text(el)).slice(0, 120);
    const buttonLike = el.tagName === 'BUTTON' || el.tagName === 'INPUT' || (bg !== null && bg !== '#ffffff');
    const aboveFold = r.top + window.scrollY < window.innerHeight;
    return { el, label, bg, color: toHex(s.color), radius: s.borderRadius, area: r.width * r.height, buttonLike, aboveFold };
  }).filter((c) => c.label && c.buttonLike && c.area > 0);
  candidates.sort((a, b) => (Number(b.aboveFold) - Number(a.aboveFold)) || (b.area - a.area));
  const best = candidates[0];
  const cta = best ? {
    text: best.label,
    url: best.el.tagName === 'A' ? abs(best.el.getAttribute('href')) : (best.el.form && best.el.form.action) ? abs(best.el.form.getAttribute('action') || location.href) : null,
    style: [best.bg ? 'background ' + best.bg : null, best.color ? 'text ' + best.color : null, best.radius && best.radius !== '0px' ? 'rounded ' + best.radius : null].filter(Boolean).join(', ') || null,
  } : null;

  // Colours by painted area: backgrounds weigh by their box, text colours by their text's length.
  const weights = new Map();
  const add = (c, w) => { if (c) weights.set(c, (weights.get(c) || 0) + w); };
  const fonts = new Map();
  const all = [...document.body.querySelectorAll('*')].slice(0, 5000);
  for (const el of [document.body, ...all]) {
    if (!visible(el)) continue;
    const s = getComputedStyle(el);
    const r = el.getBoundingClientRect();
    add(toHex(s.backgroundColor), Math.min(r.width * r.height, 2e6) / 100);
    const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join('');
    if (own) {
      add(toHex(s.color), own.length);
      const family = s.fontFamily.split(',')[0].trim().replace(/^["']|["']$/g, '');
      if (family) fonts.set(family, (fonts.get(family) || 0) + own.length);
    }
  }
  const palette = [...weights.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]).slice(0, 8);
  const fontFamilies = [...fonts.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]).slice(0, 5);

  const hasVideo = !!document.querySelector('video, iframe[src*="youtube.com"], iframe[src*="youtube-nocookie.com"], iframe[src*="vimeo.com"], iframe[src*="wistia"], iframe[src*="loom.com"]');
  const chatSignals = ['intercom', 'drift', 'crisp', 'tawk', 'zendesk', 'zopim', 'livechat', 'hubspot-messages', 'tidio', 'olark', 'freshchat', 'chatwoot', 'helpscout', 'gorgias', 'livechatinc'];
  const scripts = [...document.querySelectorAll('script[src], iframe[src]')].map((el) => el.getAttribute('src').toLowerCase());
  const ids = [...document.querySelectorAll('[id], [class]')].slice(0, 5000).map((el) => (el.id + ' ' + (typeof el.className === 'string' ? el.className : '')).toLowerCase());
  const hasChat = chatSignals.some((sig) => scripts.some((s) => s.includes(sig)) || ids.some((i) => i.includes(sig + '-') || i.includes(sig + '_') || i.split(/\\s+/).includes(sig)));

  const formFields = [];
  for (const el of document.querySelectorAll('form input, form select, form textarea')) {
    const type = (el.getAttribute('type') || el.tagName).toLowerCase();
    if (['hidden', 'submit', 'button', 'reset', 'image'].includes(type)) continue;
    const id = el.getAttribute('id');
    // A wrapping label's own words, without the text of the control inside it (a select's options).
    const wrapping = el.closest('label');
    let wrapped = '';
    if (wrapping) { const copy = wrapping.cloneNode(true); copy.querySelectorAll('input, select, textarea').forEach((c) => c.remove()); wrapped = (copy.textContent || '').replace(/\\s+/g, ' ').trim(); }
    const label = (id && text(document.querySelector('label[for="' + CSS.escape(id) + '"]'))) || wrapped || el.getAttribute('aria-label') || el.getAttribute('placeholder') || el.getAttribute('name') || type;
    if (label && !formFields.includes(label)) formFields.push(label);
  }

  return {
    title: document.title.trim() || null,
    description: meta('meta[name="description"]') || meta('meta[property="og:description"]'),
    og_image: abs(meta('meta[property="og:image"]') || meta('meta[name="og:image"]')),
    h1, h2, cta,
    color_palette: palette,
    font_families: fontFamilies,
    has_video: hasVideo,
    has_chat_widget: hasChat,
    form_fields: formFields.slice(0, 30),
    text: (document.body.innerText || '').replace(/[ \\t]+/g, ' ').replace(/\\n{3,}/g, '\\n\\n').trim().slice(0, 12000),
  };
})`;

export interface PageReading {
  title: string | null;
  description: string | null;
  og_image: string | null;
  h1: string[];
  h2: string[];
  cta: { text: string; url: string | null; style: string | null } | null;
  color_palette: string[];
  font_families: string[];
  has_video: boolean;
  has_chat_widget: boolean;
  form_fields: string[];
  text: string;
}
