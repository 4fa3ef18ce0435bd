/** A UUID as the database's uuid columns take it: ids from requests are checked with it before they reach a query. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
