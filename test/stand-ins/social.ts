import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * The public profile endpoint of ../shared/providers.md on 127.0.0.1, in its real wire format:
 * `GET /api/v1/users/web_profile_info/?username=X` (requires `x-ig-app-id`, else 400 "useragent
 * mismatch" as the platform answers) -> `{"data":{"user":{...}},"status":"ok"}`, and the CDN's
 * profile pictures under /pics/. Accounts:
 *
 * - `acme.widgets`: a business account (category, e-mail, phone; a bio with an address and a UK
 *   number; bio link to acme-widgets.co.uk);
 * - `jane.doe`: a public creator account (professional, not business; category "Artiste"), an
 *   obfuscated bio address and a +1 number;
 * - `hidden.garden`: private (the wire still carries a bio, a link and business fields: the service must drop them);
 * - `ghost.account`: 200 with `data.user: null`; `gone.account`: 404;
 * - `busy.account`: always 401 `require_login`; `crowded.account`: always 429 with Retry-After: 1;
 * - `flaky.account`: 429 on its first request, then a public profile;
 * - `walled.account`: 302 to /accounts/login/ (the login wall: blocked);
 * - `loadN` (any number): a plain public profile, for rate tests;
 * - `hang.account`: never answers (its request records when the client hung up).
 *
 * Every request is recorded (username, time, app id and agent).
 */
export interface SocialStandIn {
  baseUrl: string;
  requests: {
    username: string;
    at: number;
    appId: string | undefined;
    userAgent: string | undefined;
    closedAt?: number;
  }[];
  /** The bytes of a profile picture the stand-in serves, by username. */
  picture(username: string): Buffer;
  close(): Promise<void>;
}

/** A small valid PNG whose pixel depends on the name, so each account's picture has its own content hash. */
function png(name: string): Buffer {
  const seed = createHash('sha256').update(name).digest();
  // 1x1 PNG header + an IDAT that is stored raw with the seed's first bytes as the pixel (CRCs are not checked by MinIO).
  return Buffer.concat([Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108020000009077', 'hex'), seed]);
}

interface WireUser {
  id: string;
  username: string;
  full_name: string;
  biography: string;
  external_url: string | null;
  edge_followed_by: { count: number };
  edge_follow: { count: number };
  edge_owner_to_timeline_media: { count: number };
  is_business_account: boolean;
  is_professional_account: boolean;
  is_private: boolean;
  is_verified: boolean;
  business_category_name: string | null;
  category_name: string | null;
  business_email: string | null;
  business_phone_number: string | null;
  profile_pic_url: string;
  profile_pic_url_hd: string;
}

function users(base: string): Record<string, WireUser> {
  const pic = (name: string) => ({
    profile_pic_url: `${base}/pics/${name}-150.jpg?stp=dst-jpg_s150x150&_nc_ht=cdn`,
    profile_pic_url_hd: `${base}/pics/${name}.jpg?stp=dst-jpg_s320x320&_nc_ht=cdn`,
  });
  const plain = {
    is_business_account: false,
    is_professional_account: false,
    is_private: false,
    is_verified: false,
    business_category_name: null,
    category_name: null,
    business_email: null,
    business_phone_number: null,
  };
  return {
    'acme.widgets': {
      id: '3955093777',
      username: 'acme.widgets',
      full_name: 'Acme Widgets Ltd',
      biography: 'Precision widgets since 1901 🔧\nOrders: orders@acme-widgets.co.uk\nWhatsApp 07911 123456',
      external_url: 'https://www.acme-widgets.co.uk/shop?utm_source=ig',
      edge_followed_by: { count: 12840 },
      edge_follow: { count: 311 },
      edge_owner_to_timeline_media: { count: 402 },
      ...plain,
      is_business_account: true,
      is_professional_account: true,
      is_verified: true,
      business_category_name: 'Industrial Company',
      category_name: 'Industrial Company',
      business_email: 'hello@acme-widgets.co.uk',
      business_phone_number: '+441614960123',
      ...pic('acme.widgets'),
    },
    'jane.doe': {
      id: '171717171',
      username: 'jane.doe',
      full_name: 'Jane Doe',
      biography: 'Painter and printmaker. Commissions: jane [at] janedoe [dot] art · Studio +1 415 555 2671',
      external_url: 'https://linktr.ee/janedoe',
      edge_followed_by: { count: 171 },
      edge_follow: { count: 567 },
      edge_owner_to_timeline_media: { count: 29 },
      ...plain,
      is_professional_account: true,
      category_name: 'Artiste',
      ...pic('jane.doe'),
    },
    'hidden.garden': {
      id: '424242',
      username: 'hidden.garden',
      full_name: 'Hidden Garden',
      biography: 'Members only. secret@hidden-garden.example +44 20 7946 0000',
      external_url: 'https://hidden-garden.example/',
      edge_followed_by: { count: 88 },
      edge_follow: { count: 90 },
      edge_owner_to_timeline_media: { count: 12 },
      ...plain,
      is_private: true,
      is_business_account: true,
      business_category_name: 'Garden',
      business_email: 'owner@hidden-garden.example',
      business_phone_number: '+442079460000',
      ...pic('hidden.garden'),
    },
  };
}

function loadUser(base: string, name: string): WireUser {
  return {
    id: String(900000 + Number(name.slice(4))),
    username: name,
    full_name: `Load ${name.slice(4)}`,
    biography: '',
    external_url: null,
    edge_followed_by: { count: 1 },
    edge_follow: { count: 1 },
    edge_owner_to_timeline_media: { count: 0 },
    is_business_account: false,
    is_professional_account: false,
    is_private: false,
    is_verified: false,
    business_category_name: null,
    category_name: null,
    business_email: null,
    business_phone_number: null,
    profile_pic_url: `${base}/pics/${name}.jpg`,
    profile_pic_url_hd: `${base}/pics/${name}.jpg`,
  };
}

export async function startSocialStandIn(): Promise<SocialStandIn> {
  const requests: SocialStandIn['requests'] = [];
  const seen = new Map<string, number>();
  let base = '';
  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
    void res
      .writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers })
      .end(JSON.stringify(body));

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', base);
    const pic = /^\/pics\/([a-z0-9._]+?)(?:-150)?\.jpg$/.exec(url.pathname);
    if (pic?.[1]) return void res.writeHead(200, { 'content-type': 'image/jpeg' }).end(png(pic[1]));
    if (url.pathname === '/accounts/login/')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Log in</body></html>');
    if (url.pathname !== '/api/v1/users/web_profile_info/')
      return json(res, 404, { message: 'Page not found', status: 'fail' });
    const username = (url.searchParams.get('username') ?? '').toLowerCase();
    const appId = req.headers['x-ig-app-id'] as string | undefined;
    const record: SocialStandIn['requests'][number] = {
      username,
      at: Date.now(),
      appId,
      userAgent: req.headers['user-agent'],
    };
    requests.push(record);
    res.on('close', () => {
      record.closedAt = Date.now();
    });
    const count = (seen.get(username) ?? 0) + 1;
    seen.set(username, count);
    if (!appId) return json(res, 400, { message: 'useragent mismatch', status: 'fail' });

    if (username === 'hang.account') return;
    if (username === 'busy.account')
      return json(res, 401, {
        message: 'Please wait a few minutes before you try again.',
        require_login: true,
        status: 'fail',
      });
    if (username === 'crowded.account')
      return void res
        .writeHead(429, { 'content-type': 'text/html', 'retry-after': '1' })
        .end('<html><body>Too Many Requests</body></html>');
    if (username === 'flaky.account' && count === 1)
      return void res
        .writeHead(429, { 'content-type': 'text/html' })
        .end('<html><body>Too Many Requests</body></html>');
    if (username === 'walled.account')
      return void res
        .writeHead(302, { location: `${base}/accounts/login/?next=%2Fapi%2Fv1%2Fusers%2Fweb_profile_info%2F` })
        .end();
    if (username === 'gone.account')
      return void res
        .writeHead(404, { 'content-type': 'text/html' })
        .end("<html><body>Sorry, this page isn't available.</body></html>");
    const known =
      users(base)[username] ??
      (/^load\d+$/.test(username)
        ? loadUser(base, username)
        : username === 'flaky.account'
          ? { ...loadUser(base, 'load0'), id: '5150', username, full_name: 'Flaky Account' }
          : undefined);
    return json(res, 200, { data: { user: known ?? null }, status: 'ok' });
  };

  const listening = await listenLocal(createServer(handle));
  base = listening.baseUrl;
  return { baseUrl: base, requests, picture: png, close: listening.close };
}
