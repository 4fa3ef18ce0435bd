import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for US SEC EDGAR on 127.0.0.1, one server answering the paths of all three hosts in
 * their real wire formats (../../../shared/providers.md, "US SEC EDGAR"): www.sec.gov's ticker files,
 * data.sec.gov's submissions (404 with an S3 XML body for an unknown CIK) and efts.sec.gov's entity
 * autocomplete. Like SEC it answers 403 HTML to a request without a declared agent (an email in the
 * User-Agent) and 403 HTML "Request Rate Threshold Exceeded" above N requests per second in total.
 * A test fixture only.
 */

export interface SecStandInOptions {
  /** Requests allowed in any one-second window, rejected ones included (as SEC counts). Default 10. */
  maxPerSecond?: number;
  /** Also answer CIKs 9000000 .. 9000000+n-1 with generated submissions documents (for load tests). */
  syntheticFilers?: number;
}

/** First CIK of the generated filers. */
export const SYNTHETIC_CIK_BASE = 9000000;

function syntheticSubmissions(cik: number): Record<string, unknown> {
  const base = SUBMISSIONS['320193'] as Record<string, unknown>;
  return {
    ...base,
    cik: String(cik),
    name: `SYNTHETIC FILER ${cik - SYNTHETIC_CIK_BASE} INC`,
    tickers: [],
    exchanges: [],
    ein: null,
    lei: null,
  };
}

export interface SecRequest {
  /** Path without query, e.g. "/files/company_tickers_exchange.json". */
  path: string;
  /** Date.now() when it arrived. */
  at: number;
  userAgent: string | undefined;
  status: number;
}

export interface SecStandIn {
  /** Serves www.sec.gov, data.sec.gov and efts.sec.gov paths alike. */
  baseUrl: string;
  /** Every request received, in order, with its time and the status it got. */
  requests: SecRequest[];
  /** Requests received for `path` (without query). */
  count(path: string): number;
  close(): Promise<void>;
}

/** One row per ticker, as company_tickers_exchange.json lists them; Alphabet has two share classes. */
export const TICKER_ROWS: [number, string, string, string | null][] = [
  [320193, 'Apple Inc.', 'AAPL', 'Nasdaq'],
  [789019, 'MICROSOFT CORP', 'MSFT', 'Nasdaq'],
  [1652044, 'Alphabet Inc.', 'GOOGL', 'Nasdaq'],
  [1652044, 'Alphabet Inc.', 'GOOG', 'Nasdaq'],
  [937966, 'ASML HOLDING NV', 'ASML', 'Nasdaq'],
  [1418121, 'Apple Hospitality REIT, Inc.', 'APLE', 'NYSE'],
];

function filings(
  rows: { accessionNumber: string; filingDate: string; reportDate: string; form: string; primaryDocument: string }[],
) {
  return {
    recent: {
      accessionNumber: rows.map((r) => r.accessionNumber),
      filingDate: rows.map((r) => r.filingDate),
      reportDate: rows.map((r) => r.reportDate),
      acceptanceDateTime: rows.map((r) => `${r.filingDate}T16:30:00.000Z`),
      act: rows.map(() => '34'),
      form: rows.map((r) => r.form),
      fileNumber: rows.map(() => '001-36743'),
      filmNumber: rows.map((_, i) => String(241400000 + i)),
      items: rows.map(() => ''),
      core_type: rows.map((r) => r.form),
      size: rows.map(() => 1234567),
      isXBRL: rows.map(() => 1),
      isInlineXBRL: rows.map(() => 1),
      primaryDocument: rows.map((r) => r.primaryDocument),
      primaryDocDescription: rows.map((r) => r.form),
    },
    files: [
      {
        name: 'CIK0000320193-submissions-001.json',
        filingCount: 1234,
        filingFrom: '1994-01-26',
        filingTo: '2015-03-12',
      },
    ],
  };
}

const APPLE_ADDRESS = {
  street1: 'ONE APPLE PARK WAY',
  street2: null,
  city: 'CUPERTINO',
  stateOrCountry: 'CA',
  zipCode: '95014',
  stateOrCountryDescription: 'CA',
  isForeignLocation: 0,
  foreignStateTerritory: null,
  country: null,
  countryCode: null,
};

/** Submissions documents by unpadded CIK, as data.sec.gov/submissions/CIK##########.json returns them. */
export const SUBMISSIONS: Record<string, Record<string, unknown>> = {
  '320193': {
    cik: '320193',
    entityType: 'operating',
    sic: '3571',
    sicDescription: 'Electronic Computers',
    ownerOrg: '06 Technology',
    insiderTransactionForOwnerExists: 0,
    insiderTransactionForIssuerExists: 1,
    name: 'Apple Inc.',
    tickers: ['AAPL'],
    exchanges: ['Nasdaq'],
    ein: '942404110',
    lei: null,
    description: '',
    website: '',
    investorWebsite: '',
    category: 'Large accelerated filer',
    fiscalYearEnd: '0928',
    stateOfIncorporation: 'CA',
    stateOfIncorporationDescription: 'CA',
    addresses: { mailing: APPLE_ADDRESS, business: APPLE_ADDRESS },
    phone: '(408) 996-1010',
    flags: '',
    formerNames: [
      { name: 'APPLE INC', from: '2007-01-10T00:00:00.000Z', to: '2019-08-05T00:00:00.000Z' },
      { name: 'APPLE COMPUTER INC', from: '1994-01-26T00:00:00.000Z', to: '2007-01-04T00:00:00.000Z' },
    ],
    filings: filings([
      {
        accessionNumber: '0000320193-25-000079',
        filingDate: '2025-10-31',
        reportDate: '2025-09-27',
        form: '10-K',
        primaryDocument: 'aapl-20250927.htm',
      },
      {
        accessionNumber: '0000320193-25-000073',
        filingDate: '2025-08-01',
        reportDate: '2025-06-28',
        form: '10-Q',
        primaryDocument: 'aapl-20250628.htm',
      },
    ]),
  },
  '789019': {
    cik: '789019',
    entityType: 'operating',
    sic: '7372',
    sicDescription: 'Services-Prepackaged Software',
    name: 'MICROSOFT CORP',
    tickers: ['MSFT'],
    exchanges: ['Nasdaq'],
    ein: '911144442',
    category: 'Large accelerated filer',
    fiscalYearEnd: '0630',
    stateOfIncorporation: 'WA',
    addresses: {
      mailing: {
        street1: 'ONE MICROSOFT WAY',
        street2: null,
        city: 'REDMOND',
        stateOrCountry: 'WA',
        zipCode: '98052-6399',
        stateOrCountryDescription: 'WA',
      },
      business: {
        street1: 'ONE MICROSOFT WAY',
        street2: null,
        city: 'REDMOND',
        stateOrCountry: 'WA',
        zipCode: '98052-6399',
        stateOrCountryDescription: 'WA',
      },
    },
    phone: '425-882-8080',
    formerNames: [],
    filings: filings([
      {
        accessionNumber: '0000950170-25-100235',
        filingDate: '2025-07-30',
        reportDate: '2025-06-30',
        form: '10-K',
        primaryDocument: 'msft-20250630.htm',
      },
    ]),
  },
  '937966': {
    cik: '937966',
    entityType: 'operating',
    sic: '3559',
    sicDescription: 'Special Industry Machinery, NEC',
    name: 'ASML HOLDING NV',
    tickers: ['ASML'],
    exchanges: ['Nasdaq'],
    ein: '000000000',
    lei: '724500Y6DUVHQD6OXN27',
    category: 'Large accelerated filer',
    fiscalYearEnd: '1231',
    stateOfIncorporation: 'P7',
    addresses: {
      mailing: {
        street1: 'DE RUN 6501',
        street2: null,
        city: 'VELDHOVEN',
        stateOrCountry: 'P7',
        zipCode: '5504DR',
        stateOrCountryDescription: 'Netherlands',
        isForeignLocation: 1,
        foreignStateTerritory: null,
        country: 'Netherlands',
        countryCode: 'P7',
      },
      business: {
        street1: 'DE RUN 6501',
        street2: 'P.O. BOX 324',
        city: 'VELDHOVEN',
        stateOrCountry: 'P7',
        zipCode: '5504DR',
        stateOrCountryDescription: 'Netherlands',
        isForeignLocation: 1,
        foreignStateTerritory: 'Noord-Brabant',
        country: 'Netherlands',
        countryCode: 'P7',
      },
    },
    phone: '31402683938',
    formerNames: [
      { name: 'ASM LITHOGRAPHY HOLDING N V', from: '1995-03-14T00:00:00.000Z', to: '2001-04-04T00:00:00.000Z' },
    ],
    filings: filings([
      {
        accessionNumber: '0000937966-25-000007',
        filingDate: '2025-02-12',
        reportDate: '2024-12-31',
        form: '20-F',
        primaryDocument: 'asml-20241231.htm',
      },
    ]),
  },
  /**
   * Foreign filers as EDGAR really writes them (issue 37): EDGAR's own codes, not ISO. SIEMENS AG
   * has countryCode "2M"; Siemens Energy and Cool Japan Fund have only stateOrCountry "2M"/"M0"
   * and its description, with country and countryCode null.
   */
  '940418': {
    cik: '940418',
    name: 'SIEMENS AG',
    sic: '3600',
    sicDescription: 'Electronic & Other Electrical Equipment (No Computer Equip)',
    ein: null,
    addresses: {
      mailing: {
        street1: 'WERNER-VON-SIEMENS-STR. 1',
        street2: null,
        city: 'MUNICH',
        stateOrCountry: '2M',
        zipCode: '80333',
        stateOrCountryDescription: 'Germany',
        isForeignLocation: 1,
        foreignStateTerritory: null,
        country: null,
        countryCode: '2M',
      },
      business: {
        street1: 'WERNER-VON-SIEMENS-STR. 1',
        street2: null,
        city: 'MUNICH',
        stateOrCountry: '2M',
        zipCode: '80333',
        stateOrCountryDescription: 'Germany',
        isForeignLocation: 1,
        foreignStateTerritory: null,
        country: null,
        countryCode: '2M',
      },
    },
    filings: filings([]),
  },
  '1830056': {
    cik: '1830056',
    name: 'Siemens Energy AG/ADR',
    ein: null,
    addresses: {
      mailing: {
        street1: 'OTTO-HAHN-RING 6',
        street2: null,
        city: 'MUNICH',
        stateOrCountry: '2M',
        zipCode: '81739',
        stateOrCountryDescription: 'Germany',
        isForeignLocation: null,
        foreignStateTerritory: null,
        country: null,
        countryCode: null,
      },
      business: {
        street1: 'OTTO-HAHN-RING 6',
        street2: null,
        city: 'MUNICH',
        stateOrCountry: '2M',
        zipCode: '81739',
        stateOrCountryDescription: 'Germany',
        isForeignLocation: null,
        foreignStateTerritory: null,
        country: null,
        countryCode: null,
      },
    },
    filings: filings([]),
  },
  '1911716': {
    cik: '1911716',
    name: 'Cool Japan Fund Inc.',
    ein: null,
    addresses: {
      mailing: {
        street1: '6-10-1 ROPPONGI',
        street2: null,
        city: 'MINATO-KU, TOKYO',
        stateOrCountry: 'M0',
        zipCode: '106-6117',
        stateOrCountryDescription: 'Japan',
        isForeignLocation: null,
        foreignStateTerritory: null,
        country: null,
        countryCode: null,
      },
      business: {
        street1: '6-10-1 ROPPONGI',
        street2: null,
        city: 'MINATO-KU, TOKYO',
        stateOrCountry: 'M0',
        zipCode: '106-6117',
        stateOrCountryDescription: 'Japan',
        isForeignLocation: null,
        foreignStateTerritory: null,
        country: null,
        countryCode: null,
      },
    },
    filings: filings([]),
  },
  /** Not listed (no ticker), business address empty: lookup falls back to the mailing address. */
  '1000045': {
    cik: '1000045',
    entityType: 'other',
    sic: '',
    sicDescription: '',
    name: 'NICHOLAS FINANCIAL INC /BC/',
    tickers: [],
    exchanges: [],
    ein: null,
    category: '',
    addresses: {
      mailing: {
        street1: '26133 US HWY 19 NORTH',
        street2: 'SUITE 300',
        city: 'CLEARWATER',
        stateOrCountry: 'FL',
        zipCode: '33763',
        stateOrCountryDescription: 'FL',
      },
      business: {
        street1: null,
        street2: null,
        city: null,
        stateOrCountry: null,
        zipCode: null,
        stateOrCountryDescription: null,
      },
    },
    formerNames: [],
    filings: filings([]),
  },
};

const UNDECLARED_PAGE = `<!DOCTYPE html>
<html><head><title>SEC.gov | Your Request Originates from an Undeclared Automated Tool</title></head>
<body><h1>Your Request Originates from an Undeclared Automated Tool</h1>
<p>To allow for equitable access to all users, SEC reserves the right to limit requests originating from undeclared automated tools.
Your request has been identified as part of a network of automated tools outside of the acceptable policy and will be managed until action is taken to declare your traffic.</p>
<p>Please declare your traffic by updating your user agent to include company specific information.</p></body></html>`;

const RATE_PAGE = `<!DOCTYPE html>
<html><head><title>SEC.gov | Request Rate Threshold Exceeded</title></head>
<body><h1>Request Rate Threshold Exceeded</h1>
<p>Your request rate has exceeded SEC's fair access threshold of 10 requests per second.
Access will be limited for 10 minutes once the request rate falls below the threshold.</p></body></html>`;

function noSuchKey(key: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>${key}</Key><RequestId>8F1C2A4B6D0E9F37</RequestId><HostId>c3RhbmQtaW4=</HostId></Error>`;
}

function companyTickers(): Record<string, { cik_str: number; ticker: string; title: string }> {
  return Object.fromEntries(TICKER_ROWS.map(([cik, title, ticker], i) => [String(i), { cik_str: cik, ticker, title }]));
}

function searchIndex(keysTyped: string) {
  const q = keysTyped.toLowerCase();
  const seen = new Set<number>();
  const hits = TICKER_ROWS.filter(
    ([cik, name]) => name.toLowerCase().includes(q) && !seen.has(cik) && seen.add(cik),
  ).map(([cik, name, ticker], i) => ({
    _index: 'edgar_entity_20251101_000000',
    _id: String(cik),
    _score: 10 - i,
    _source: { entity: `${name} (${ticker})`, entity_words: name, tickers: ticker, rank: i },
  }));
  return {
    took: 3,
    timed_out: false,
    hits: { total: { value: hits.length, relation: 'eq' }, max_score: hits[0]?._score ?? null, hits },
  };
}

export async function startSecStandIn(options: SecStandInOptions = {}): Promise<SecStandIn> {
  const maxPerSecond = options.maxPerSecond ?? 10;
  const requests: SecRequest[] = [];

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const at = Date.now();
    const userAgent = req.headers['user-agent'];
    const record: SecRequest = { path: url.pathname, at, userAgent, status: 0 };
    requests.push(record);
    const send = (status: number, contentType: string, body: string) => {
      record.status = status;
      res.writeHead(status, { 'content-type': contentType }).end(body);
    };
    const json = (body: unknown) => send(200, 'application/json', JSON.stringify(body));

    if (requests.filter((r) => r.at > at - 1000).length > maxPerSecond) return send(403, 'text/html', RATE_PAGE);
    if (!userAgent || !/\S+@\S+\.\S+/.test(userAgent)) return send(403, 'text/html', UNDECLARED_PAGE);
    if (req.method !== 'GET') return send(405, 'text/html', '<html><body>Method Not Allowed</body></html>');

    if (url.pathname === '/files/company_tickers.json') return json(companyTickers());
    if (url.pathname === '/files/company_tickers_exchange.json')
      return json({ fields: ['cik', 'name', 'ticker', 'exchange'], data: TICKER_ROWS });
    if (url.pathname === '/LATEST/search-index') return json(searchIndex(url.searchParams.get('keysTyped') ?? ''));
    const submissions = /^\/submissions\/CIK(\d{10})\.json$/.exec(url.pathname);
    const cik = submissions?.[1]?.replace(/^0+(?=\d)/, '');
    const synthetic =
      Number(cik) >= SYNTHETIC_CIK_BASE && Number(cik) < SYNTHETIC_CIK_BASE + (options.syntheticFilers ?? 0);
    const doc = cik ? (synthetic ? syntheticSubmissions(Number(cik)) : SUBMISSIONS[cik]) : undefined;
    if (doc) return json(doc);
    return send(404, 'application/xml', noSuchKey(url.pathname.slice(1)));
  });

  const { baseUrl, close } = await listenLocal(server);
  return {
    baseUrl,
    requests,
    count: (path) => requests.filter((r) => r.path === path).length,
    close,
  };
}
