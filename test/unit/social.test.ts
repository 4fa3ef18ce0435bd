import { readAnswer, retryAfter } from '../../activities/social/profile-api';
import { bioContacts, profileRegion, profileResult } from '../../activities/social/profile';
import { crawlPublicSocialPayload } from '../../jobs/crawl-public-social';
import type { OutboundResponse } from '../../lib/outbound';
import { parseUsername, profileUsername, usernameFromProfileUrl } from '../../lib/social-url';

describe('profile URLs and usernames', () => {
  test.each([
    ['https://www.instagram.com/acme.widgets/', 'acme.widgets'],
    ['https://instagram.com/Acme.Widgets?igshid=MzRlODBiNWFlZA==', 'acme.widgets'],
    ['http://m.instagram.com/acme_widgets', 'acme_widgets'],
    ['instagram.com/acme.widgets/', 'acme.widgets'],
    ['https://www.instagram.com/acme.widgets/reels/', 'acme.widgets'],
    ['https://www.instagram.com/_u/acme.widgets', 'acme.widgets'],
    ['https://www.instagram.com/stories/acme.widgets/3215/', 'acme.widgets'],
    ['https://instagr.am/acme.widgets', 'acme.widgets'],
    ['https://www.instagram.com/acme.widgets/#posts', 'acme.widgets'],
  ])('%s is @%s', (url, username) => {
    expect(usernameFromProfileUrl(url)).toEqual({ username });
  });

  test.each([
    [
      'https://www.instagram.com/p/C0abcDEF/',
      'profile_url is a post page, not a profile (expected instagram.com/<username>)',
    ],
    [
      'https://www.instagram.com/explore/tags/widgets/',
      'profile_url is a platform page, not a profile (expected instagram.com/<username>)',
    ],
    ['https://www.instagram.com/', 'profile_url names no profile (expected instagram.com/<username>)'],
    ['https://evil.example/instagram.com/acme', 'profile_url must be an instagram.com profile URL, not evil.example'],
    ['https://www.instagram.com/acme-widgets/', 'username may hold letters, digits, . and _ (at most 30)'],
  ])('%s is refused: %s', (url, error) => {
    expect(usernameFromProfileUrl(url)).toEqual({ error });
  });

  test('typed usernames drop the @ and the case; the username wins over a URL', () => {
    expect(parseUsername(' @Acme.Widgets ')).toEqual({ username: 'acme.widgets' });
    expect(parseUsername('a'.repeat(31))).toHaveProperty('error');
    expect(profileUsername({ username: 'one', profile_url: 'https://instagram.com/two' })).toEqual({ username: 'one' });
  });

  test("the payload needs one of the two, with the spec's message, and checks each", () => {
    const none = crawlPublicSocialPayload.safeParse({});
    expect(none.success ? [] : none.error.issues.map((i) => [i.path, i.message])).toEqual([
      [[], 'either username or profile URL must be provided'],
    ]);
    const bad = crawlPublicSocialPayload.safeParse({ profile_url: 'https://www.instagram.com/reel/xyz/' });
    expect(bad.success ? [] : bad.error.issues.map((i) => i.path)).toEqual([['profile_url']]);
    expect(crawlPublicSocialPayload.parse({ username: 'acme' })).toEqual({ username: 'acme', platform: 'instagram' });
  });
});

describe('bio contacts', () => {
  test("e-mails plain and obfuscated; phones international, and national ones in the profile's region", () => {
    expect(bioContacts('Orders: Orders@Acme.co.uk · jane [at] janedoe [dot] art', 'GB').emails).toEqual([
      'orders@acme.co.uk',
      'jane@janedoe.art',
    ]);
    expect(bioContacts('Call 0161 496 0123 or +1 415 555 2671', 'GB').phones).toEqual([
      '+441614960123',
      '+14155552671',
    ]);
    // Without a region only +CC numbers are numbers; dates and counts are not.
    expect(bioContacts('Since 1901 · 12/03/2024 · 0161 496 0123 · +49 30 901820').phones).toEqual(['+4930901820']);
  });

  test("the region comes from the business phone, else the bio link's country domain", () => {
    expect(profileRegion({ business_phone_number: '+49 30 901820', external_url: 'https://acme.co.uk' })).toBe('DE');
    expect(profileRegion({ business_phone_number: null, external_url: 'https://acme.co.uk/shop' })).toBe('GB');
    expect(profileRegion({ business_phone_number: null, external_url: 'https://acme.com' })).toBeUndefined();
  });
});

function response(status: number, body: string, headers: Record<string, string> = {}): OutboundResponse {
  return {
    url: 'https://i.instagram.com/api/v1/users/web_profile_info/?username=x',
    status,
    headers,
    redirectChain: [],
    body: Buffer.from(body),
    text: () => body,
    json: <T>() => JSON.parse(body) as T,
  };
}

const USER = {
  id: '3955093777',
  username: 'acme',
  full_name: 'Acme',
  biography: 'mail: a@acme.co.uk',
  external_url: 'https://acme.co.uk',
  edge_followed_by: { count: 171 },
  edge_follow: { count: 567 },
  edge_owner_to_timeline_media: { count: 29 },
  is_business_account: true,
  is_professional_account: true,
  is_private: false,
  is_verified: false,
  business_category_name: null,
  category_name: 'Shop',
  business_email: 'b@acme.co.uk',
  business_phone_number: '+44 161 496 0123',
  profile_pic_url: 'https://cdn/s.jpg',
  profile_pic_url_hd: null,
};

describe("the profile API's answers", () => {
  test('a profile, user: null and 404 (not found), 401 require_login and 429 (throttled), redirects, 403 and HTML (blocked)', () => {
    expect(readAnswer(response(200, JSON.stringify({ data: { user: USER }, status: 'ok' })))).toMatchObject({
      kind: 'profile',
      user: { id: '3955093777', username: 'acme' },
    });
    expect(readAnswer(response(200, JSON.stringify({ data: { user: null }, status: 'ok' })))).toEqual({
      kind: 'not_found',
    });
    expect(readAnswer(response(404, '<html></html>'))).toEqual({ kind: 'not_found' });
    expect(
      readAnswer(
        response(
          401,
          JSON.stringify({
            message: 'Please wait a few minutes before you try again.',
            require_login: true,
            status: 'fail',
          }),
        ),
      ),
    ).toEqual({ kind: 'throttled', how: 'HTTP 401 require_login', retryAfterSeconds: null });
    expect(readAnswer(response(429, 'Too Many Requests', { 'retry-after': '120' }))).toEqual({
      kind: 'throttled',
      how: 'HTTP 429',
      retryAfterSeconds: 120,
    });
    expect(readAnswer(response(302, '', { location: 'https://www.instagram.com/accounts/login/' }))).toEqual({
      kind: 'blocked',
      how: 'HTTP 302 redirect to https://www.instagram.com/accounts/login/',
    });
    expect(readAnswer(response(403, ''))).toEqual({ kind: 'blocked', how: 'HTTP 403' });
    expect(readAnswer(response(200, '<!doctype html><title>Login</title>'))).toEqual({
      kind: 'blocked',
      how: 'an HTML login page instead of the profile',
    });
    expect(() => readAnswer(response(503, 'Service Unavailable'))).toThrow('the profile API answered HTTP 503');
  });

  test('Retry-After as seconds or an HTTP date', () => {
    expect(retryAfter('30')).toBe(30);
    expect(
      retryAfter(new Date(Date.parse('2026-01-01T00:01:00Z')).toUTCString(), Date.parse('2026-01-01T00:00:00Z')),
    ).toBe(60);
    expect(retryAfter(undefined)).toBeNull();
  });

  test('the result: business fields for business accounts; a private profile keeps only what the spec allows', () => {
    const user = readAnswer(response(200, JSON.stringify({ data: { user: USER } })));
    if (user.kind !== 'profile') throw new Error('expected a profile');
    expect(profileResult(user.user, { url: 'https://media/x.jpg' })).toMatchObject({
      business_category: 'Shop',
      business_email: 'b@acme.co.uk',
      business_phone: '+441614960123',
      bio_emails: ['a@acme.co.uk'],
      profile_pic_url: 'https://cdn/s.jpg',
      profile_pic_url_hosted: 'https://media/x.jpg',
      metadata: { has_hosted_image: true },
    });
    const hidden = profileResult({ ...user.user, is_private: true }, undefined);
    expect(hidden).toMatchObject({
      bio: '',
      external_url: null,
      business_category: null,
      business_email: null,
      business_phone: null,
      bio_emails: [],
      profile_pic_url_hosted: null,
      metadata: { has_hosted_image: false },
    });
    expect(profileResult({ ...user.user, is_business_account: false }, undefined)).toMatchObject({
      business_category: null,
      business_email: null,
      business_phone: null,
    });
  });
});
