import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import type { CrawlPublicSocialResult } from '../../jobs/crawl-public-social';
import { findEmailsInText } from '../../lib/emails';
import { domainOf } from '../../lib/normalize';
import { findPhonesInText, guessRegion, parsePhone } from '../../lib/phones';
import type { WireUser } from './profile-api';

/** The `metadata.source` of every result: the endpoint that answered. */
export const PROFILE_SOURCE = 'instagram_web_profile_info';

/**
 * Contacts written in a bio: e-mail addresses (plain or obfuscated, lib/emails) and phone numbers
 * (libphonenumber's matcher, lib/phones) as E.164. National formats are read in `region` (from the
 * account's business phone or its bio link's country domain); without one only +CC numbers count.
 */
export function bioContacts(bio: string, region?: CountryCode): { emails: string[]; phones: string[] } {
  const phones = findPhonesInText(bio, region)
    .filter((p) => p.valid && p.e164)
    .map((p) => p.e164 as string);
  return { emails: findEmailsInText(bio), phones: [...new Set(phones)] };
}

/** The region national numbers of a profile are read in: its business phone's country, else its bio link's ccTLD. */
export function profileRegion(user: Pick<WireUser, 'business_phone_number' | 'external_url'>): CountryCode | undefined {
  const phone = user.business_phone_number ? parsePhoneNumberFromString(user.business_phone_number) : undefined;
  if (phone?.country) return phone.country;
  const host = domainOf(user.external_url);
  return host ? guessRegion({ hostname: host }) : undefined;
}

/**
 * A profile as the spec §2.6 result. Private profiles are limited as the spec says: empty bio, no
 * business information, no bio link, no bio contacts; the picture may still be there. Business
 * fields only for business accounts. The picture is the HD one when offered.
 */
export function profileResult(user: WireUser, hosted: { url: string } | undefined): CrawlPublicSocialResult {
  const isPrivate = user.is_private === true;
  const isBusiness = user.is_business_account === true;
  const bio = isPrivate ? '' : (user.biography ?? '');
  const contacts = bio ? bioContacts(bio, profileRegion(user)) : { emails: [], phones: [] };
  const businessPhone =
    isBusiness && !isPrivate && user.business_phone_number ? parsePhone(user.business_phone_number) : undefined;
  return {
    username: user.username,
    full_name: user.full_name ?? '',
    bio,
    profile_pic_url: user.profile_pic_url_hd ?? user.profile_pic_url ?? null,
    profile_pic_url_hosted: hosted?.url ?? null,
    external_url: isPrivate ? null : (user.external_url ?? null),
    follower_count: user.edge_followed_by?.count ?? 0,
    following_count: user.edge_follow?.count ?? 0,
    post_count: user.edge_owner_to_timeline_media?.count ?? 0,
    is_business_account: isBusiness,
    is_professional_account: user.is_professional_account === true,
    is_private: isPrivate,
    is_verified: user.is_verified === true,
    business_category: isBusiness && !isPrivate ? (user.business_category_name ?? user.category_name ?? null) : null,
    business_email: isBusiness && !isPrivate ? (user.business_email ?? null) : null,
    business_phone: businessPhone ? (businessPhone.e164 ?? businessPhone.raw) : null,
    bio_emails: contacts.emails,
    bio_phones: contacts.phones,
    metadata: { social_id: user.id, source: PROFILE_SOURCE, has_hosted_image: hosted !== undefined },
  };
}
