/** URL checks that the job catalog, the API's schemas and lib/ share (WHATWG URL parser). */

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
