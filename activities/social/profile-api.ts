import { z } from 'zod';
import type { OutboundClient, OutboundResponse } from '../../lib/outbound';

/**
 * The platform's public profile endpoint (../shared/providers.md "Public social profile"):
 * `GET {SOCIAL_BASE_URL}/api/v1/users/web_profile_info/?username=X` with `x-ig-app-id` and a browser
 * User-Agent, answered with `{"data":{"user":{...}},"status":"ok"}`. One request per call; the
 * answer is a value, never a retry: the workflow decides how long a throttled profile is retried.
 */

/** `data.user` as the endpoint writes it (fields the service reads; others are ignored). */
export const wireUser = z.object({
  id: z.union([z.string(), z.number()]).transform(String),
  username: z.string(),
  full_name: z.string().nullish(),
  biography: z.string().nullish(),
  external_url: z.string().nullish(),
  edge_followed_by: z.object({ count: z.number().int() }).nullish(),
  edge_follow: z.object({ count: z.number().int() }).nullish(),
  edge_owner_to_timeline_media: z.object({ count: z.number().int() }).nullish(),
  is_business_account: z.boolean().nullish(),
  is_professional_account: z.boolean().nullish(),
  is_private: z.boolean().nullish(),
  is_verified: z.boolean().nullish(),
  business_category_name: z.string().nullish(),
  category_name: z.string().nullish(),
  business_email: z.string().nullish(),
  business_phone_number: z.string().nullish(),
  profile_pic_url: z.string().nullish(),
  profile_pic_url_hd: z.string().nullish(),
});
export type WireUser = z.infer<typeof wireUser>;

const wireAnswer = z.object({
  data: z.object({ user: z.unknown().nullable() }).nullish(),
  status: z.string().optional(),
});

export type ProfileAnswer =
  | { kind: 'profile'; user: WireUser }
  | { kind: 'not_found' }
  /** 401 with require_login, or 429: come back later (Retry-After in seconds when the answer had one). */
  | { kind: 'throttled'; how: string; retryAfterSeconds: number | null }
  /** The platform refuses this address (login wall, checkpoint, 403): only another network helps. */
  | { kind: 'blocked'; how: string };

/** An answer that is neither a profile nor one of the platform's documented refusals (5xx, garbage): worth a retry. */
export class ProfileApiError extends Error {
  override readonly name = 'ProfileApiError';
}

export interface ProfileApiOptions {
  baseUrl: string;
  appId: string;
  userAgent: string;
  http: OutboundClient;
}

export class ProfileApiClient {
  constructor(private readonly options: ProfileApiOptions) {}

  async profile(username: string, signal?: AbortSignal): Promise<ProfileAnswer> {
    const url = new URL('/api/v1/users/web_profile_info/', this.options.baseUrl);
    url.searchParams.set('username', username);
    const res = await this.options.http.fetch(url.href, {
      signal,
      provider: 'instagram',
      // A redirect from this endpoint is the login wall (/accounts/login/) or a checkpoint: never followed.
      redirect: 'manual',
      maxBytes: 2 * 1024 * 1024,
      headers: {
        'user-agent': this.options.userAgent,
        'x-ig-app-id': this.options.appId,
        accept: '*/*',
        'accept-language': 'en-US,en;q=0.9',
      },
    });
    return readAnswer(res);
  }
}

/** The endpoint's answer as one of the four outcomes; anything else is a ProfileApiError. */
export function readAnswer(res: OutboundResponse): ProfileAnswer {
  const body = safeJson(res);
  if (res.status === 404) return { kind: 'not_found' };
  if (res.status === 429)
    return { kind: 'throttled', how: 'HTTP 429', retryAfterSeconds: retryAfter(res.headers['retry-after']) };
  if (res.status === 401 && isObject(body) && body.require_login === true)
    return {
      kind: 'throttled',
      how: 'HTTP 401 require_login',
      retryAfterSeconds: retryAfter(res.headers['retry-after']),
    };
  if (res.status >= 300 && res.status < 400)
    return { kind: 'blocked', how: `HTTP ${res.status} redirect to ${res.headers.location ?? 'a login page'}` };
  if (res.status === 403 || res.status === 401) return { kind: 'blocked', how: `HTTP ${res.status}` };
  if (
    res.status === 400 &&
    isObject(body) &&
    (body.message === 'checkpoint_required' || body.message === 'challenge_required' || 'checkpoint_url' in body)
  ) {
    return { kind: 'blocked', how: `HTTP 400 ${String(body.message)}` };
  }
  if (res.status !== 200) throw new ProfileApiError(`the profile API answered HTTP ${res.status}`);
  // A 200 that is a page, not JSON: the login wall served in place of the answer.
  if (body === undefined) return { kind: 'blocked', how: 'an HTML login page instead of the profile' };
  const parsed = wireAnswer.safeParse(body);
  if (!parsed.success) throw new ProfileApiError('the profile API answered JSON without data.user');
  if (parsed.data.data?.user === null || parsed.data.data?.user === undefined) return { kind: 'not_found' };
  const user = wireUser.safeParse(parsed.data.data.user);
  if (!user.success)
    throw new ProfileApiError(
      `the profile API answered a user the service cannot read: ${user.error.issues[0]?.path.join('.') ?? ''} ${user.error.issues[0]?.message ?? ''}`.trim(),
    );
  return { kind: 'profile', user: user.data };
}

function safeJson(res: OutboundResponse): unknown {
  try {
    return res.json();
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Retry-After in seconds (delta or HTTP date), null when absent or unreadable. */
export function retryAfter(header: string | undefined, now = Date.now()): number | null {
  if (!header) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}
