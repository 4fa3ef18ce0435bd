import { z } from 'zod';

/** Zod fields several job payloads share. */

/** Whether `v` is an absolute http:// or https:// URL with a host (as the WHATWG URL parser reads it). */
export function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0;
  } catch {
    return false;
  }
}

/** Whether the URL carries `user:password@` before its host (false for what is no URL at all). */
export function hasCredentials(v: string): boolean {
  try {
    const u = new URL(v);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/** An absolute http(s) URL with a host; the message names the field. */
export const httpUrl = (what: string) =>
  z
    .string()
    .trim()
    .min(1)
    .refine(isHttpUrl, `${what} must be a valid http(s) URL`)
    // `user:pass@host` hides the real host from a reader (http://bank.example@10.0.0.1/) and no page
    // of a lead's site needs it: refused at submission rather than failing in the worker.
    .refine((v) => !hasCredentials(v), `${what} must not contain credentials (user:password@ before the host)`);

export const isoTime = z.string().describe('ISO 8601 timestamp');

/** The social profile links of a result, as top-level keys (spec §2.1: `data.proflink`, `data.microblog`, ...). */
export const socialKeys = {
  proflink: z.string().nullable().describe('LinkedIn'),
  microblog: z.string().nullable().describe('X / Twitter'),
  socialnet: z.string().nullable().describe('Facebook'),
  instagram: z.string().nullable(),
  youtube: z.string().nullable(),
  tiktok: z.string().nullable(),
  pinterest: z.string().nullable(),
  github: z.string().nullable(),
};

/** A result shape not documented yet: any object. */
export const anyResult = z.record(z.string(), z.unknown());
