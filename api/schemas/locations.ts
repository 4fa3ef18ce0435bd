import { z } from 'zod';
import { countryCode } from '../../jobs/fields';
import { searchKey } from '../../db/repositories/locations';

export const locationListQuery = z.strictObject({
  q: z
    .string()
    .trim()
    .max(100, 'q may be at most 100 characters')
    .refine((q) => q === '' || searchKey(q) !== '', 'q must contain a letter or digit')
    .optional()
    .describe(
      'prefix of the city name, case- and accent-insensitive ("zurich" finds Zürich, "sao paulo" São Paulo); punctuation counts as a space ("saint etienne" finds Saint-Étienne). Empty or absent lists every city',
    ),
  country: countryCode('country is an ISO 3166-1 alpha-2 code, e.g. CH')
    .optional()
    .describe('ISO 3166-1 alpha-2 country code, case-insensitive'),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
});

export const locationParams = z.strictObject({
  id: z.coerce.number().int().min(1).max(2_147_483_647).describe('GeoNames id'),
});

export const location = z
  .object({
    id: z.number().int().describe('the GeoNames id'),
    name: z.string().describe('the GeoNames name, with its accents'),
    ascii_name: z
      .string()
      .describe(
        'the name with accents removed (derived from name: Zürich -> Zurich); names in non-Latin scripts stay as they are',
      ),
    country_code: z.string().describe('ISO 3166-1 alpha-2'),
    country: z.string().describe('English country name (i18n-iso-countries)'),
    region: z
      .string()
      .nullable()
      .describe(
        'the GeoNames admin1 code (e.g. ZH for the canton of Zürich, CA for California), not a name: the data package carries no region names; null when GeoNames has none',
      ),
    latitude: z.number(),
    longitude: z.number(),
    population: z.number().int(),
  })
  .meta({ id: 'Location' });

export const locationListResponse = z
  .object({
    total: z.number().int().describe('cities matching q and country'),
    page: z.number().int(),
    limit: z.number().int(),
    locations: z.array(location).describe('biggest population first'),
  })
  .meta({ id: 'LocationList' });
