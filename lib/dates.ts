/** A timestamp as the API writes it (ISO 8601, UTC), null kept null. */
export const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());
