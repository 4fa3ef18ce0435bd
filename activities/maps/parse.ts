import OpeningHours from 'opening_hours';

/**
 * Pure parsers of crawlMaps: what a `url` payload names (lib/maps-place.ts, which the payload schema
 * validates with too), Google's opening periods and price levels, and OSM's opening_hours, into the
 * §2.2 shapes.
 */

export { parsePlaceRef, type PlaceRef } from '../../lib/maps-place';

export const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'] as const;
// The spec's hours object reads best Monday first.
const WEEK_ORDER = [1, 2, 3, 4, 5, 6, 0] as const;

const pad = (n: number) => String(n).padStart(2, '0');
const hhmm = (hour: number, minute: number) => `${pad(hour)}:${pad(minute)}`;

export interface GooglePeriod {
  open?: { day?: number; hour?: number; minute?: number };
  close?: { day?: number; hour?: number; minute?: number };
}

/**
 * Google's periods (day 0 = Sunday) as lowercase day -> "08:00-20:00" (several ranges joined by
 * ", "), "Closed" for days without a period. A period that ends after midnight belongs to the day
 * it opens; a lone open period at Sunday 00:00 without close means open all the time: "00:00-24:00"
 * every day, as OpenStreetMap's 24/7 reads (a range, as spec §2.2 has it, not a phrase).
 */
export function hoursFromPeriods(periods: GooglePeriod[] | undefined): Record<string, string> | null {
  if (!periods || periods.length === 0) return null;
  if (
    periods.length === 1 &&
    periods[0]?.close === undefined &&
    (periods[0]?.open?.hour ?? 0) === 0 &&
    (periods[0]?.open?.minute ?? 0) === 0
  ) {
    return Object.fromEntries(WEEK_ORDER.map((d) => [DAYS[d], '00:00-24:00']));
  }
  const ranges = new Map<number, string[]>();
  for (const p of periods) {
    const day = p.open?.day;
    if (day === undefined || day < 0 || day > 6) continue;
    const open = hhmm(p.open?.hour ?? 0, p.open?.minute ?? 0);
    // A close at midnight ends the day it opened: "24:00", as hoursFromOsm writes the same case (not "00:00").
    const midnight = p.close !== undefined && (p.close.hour ?? 0) === 0 && (p.close.minute ?? 0) === 0;
    const close = p.close && !midnight ? hhmm(p.close.hour ?? 0, p.close.minute ?? 0) : '24:00';
    ranges.set(day, [...(ranges.get(day) ?? []), `${open}-${close}`]);
  }
  return Object.fromEntries(WEEK_ORDER.map((d) => [DAYS[d], ranges.get(d)?.join(', ') ?? 'Closed']));
}

// A week without public holidays or DST changes, to read a weekly schedule from.
const REFERENCE_MONDAY = { year: 2024, month: 0, day: 8 };

/**
 * OSM `opening_hours` (e.g. "Mo-Fr 08:00-20:00; Sa 09:00-12:00") read with the opening_hours
 * library over a reference week, in the same shape as hoursFromPeriods. Null when the value does
 * not parse (the raw text is not a schedule the user can trust).
 */
export function hoursFromOsm(value: string | undefined | null): Record<string, string> | null {
  if (!value?.trim()) return null;
  let oh: OpeningHours;
  try {
    // No address: public-holiday rules cannot apply and are ignored (mode 0: time ranges only).
    oh = new OpeningHours(value.trim(), null, 0);
  } catch {
    return null;
  }
  const { year, month, day } = REFERENCE_MONDAY;
  const out: Record<string, string> = {};
  for (let i = 0; i < 7; i++) {
    const from = new Date(year, month, day + i);
    const to = new Date(year, month, day + i + 1);
    const intervals = oh.getOpenIntervals(from, to);
    const name = DAYS[from.getDay()] as string;
    if (intervals.length === 0) {
      out[name] = 'Closed';
      continue;
    }
    out[name] = intervals
      .map(
        ([start, end]) =>
          `${hhmm(start.getHours(), start.getMinutes())}-${end.getTime() >= to.getTime() ? '24:00' : hhmm(end.getHours(), end.getMinutes())}`,
      )
      .join(', ');
  }
  return out;
}

const PRICE_LEVELS: Record<string, '$' | '$$' | '$$$' | '$$$$' | undefined> = {
  PRICE_LEVEL_INEXPENSIVE: '$',
  PRICE_LEVEL_MODERATE: '$$',
  PRICE_LEVEL_EXPENSIVE: '$$$',
  PRICE_LEVEL_VERY_EXPENSIVE: '$$$$',
};

/**
 * Google's priceLevel as `$`..`$$$$`; FREE and UNSPECIFIED (and anything unknown) have no dollar
 * sign, so the field is left out.
 */
export function priceLevel(value: unknown): '$' | '$$' | '$$$' | '$$$$' | undefined {
  return typeof value === 'string' ? PRICE_LEVELS[value] : undefined;
}

/** "bakery in Leeds" -> what and where; without " in " the whole text is the what. */
export function splitQuery(query: string): { what: string; where: string | null } {
  const m = /^(.*?)\s+(?:in|near)\s+(.+)$/i.exec(query.trim());
  return m ? { what: (m[1] as string).trim(), where: (m[2] as string).trim() } : { what: query.trim(), where: null };
}
