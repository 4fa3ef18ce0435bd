import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for the UK Companies House API on 127.0.0.1, answering in its real wire format
 * (../../../shared/providers.md, "UK Companies House"): Basic auth with the key as user name,
 * the ch:service error bodies, and X-Ratelimit-* headers on every answer with 429 once the
 * configured limit is used up in the window. A test fixture only.
 */

export interface CompaniesHouseStandInOptions {
  apiKey: string;
  /** Requests allowed per window. Default 600, as the real API. */
  limit?: number;
  /** Window length in seconds. Default 300. */
  windowSeconds?: number;
}

export interface CompaniesHouseStandIn {
  baseUrl: string;
  /** Requests received, by path without query (e.g. "/company/03323845"), and in total. */
  requests: Map<string, number>;
  totalRequests(): number;
  /** Answer the next `count` requests with `status` (e.g. 502 from the gateway in front of the API). */
  failNext(status: number, count?: number): void;
  /**
   * Searches whose q contains `query` also answer one item with a company number and no `title`
   * (a malformed item, as a real search page may hold one), after the matching companies.
   */
  addUntitledSearchItem(query: string): void;
  close(): Promise<void>;
}

const SHELL_ADDRESS = {
  premises: 'Shell Centre',
  address_line_1: 'York Road',
  locality: 'London',
  postal_code: 'SE1 7NA',
  country: 'United Kingdom',
};

/** Company profiles as GET /company/{number} returns them. */
export const PROFILES: Record<string, Record<string, unknown>> = {
  '03323845': {
    company_name: 'SHELL GROUP LIMITED',
    company_number: '03323845',
    company_status: 'active',
    type: 'ltd',
    jurisdiction: 'england-wales',
    date_of_creation: '1997-02-25',
    sic_codes: ['70100', '06100'],
    registered_office_address: SHELL_ADDRESS,
    accounts: { next_due: '2027-09-30', last_accounts: { made_up_to: '2025-12-31', type: 'full' } },
    has_insolvency_history: false,
    links: { self: '/company/03323845', officers: '/company/03323845/officers' },
  },
  '04366849': {
    company_name: 'SHELL TRADING PLC',
    company_number: '04366849',
    company_status: 'dissolved',
    type: 'plc',
    jurisdiction: 'england-wales',
    date_of_creation: '2002-01-31',
    date_of_cessation: '2019-06-11',
    sic_codes: ['46711'],
    registered_office_address: {
      premises: '2nd Floor',
      address_line_1: '80 Strand',
      address_line_2: 'Covent Garden',
      locality: 'London',
      region: 'Greater London',
      postal_code: 'WC2R 0DT',
      country: 'England',
    },
    has_insolvency_history: false,
    links: { self: '/company/04366849', officers: '/company/04366849/officers' },
  },
  // The people tests' company (its site is the website stand-in's acme-widgets.co.uk), apart from the
  // registry tests' companies so that neither warms the other's 24-hour cache in a shared run.
  '09876543': {
    company_name: 'ACME WIDGETS LIMITED',
    company_number: '09876543',
    company_status: 'active',
    type: 'ltd',
    jurisdiction: 'england-wales',
    date_of_creation: '2015-11-03',
    sic_codes: ['28990'],
    registered_office_address: {
      premises: 'Unit 4',
      address_line_1: 'Mill Lane',
      locality: 'Leeds',
      postal_code: 'LS1 4AB',
      country: 'England',
    },
    has_insolvency_history: false,
    links: { self: '/company/09876543', officers: '/company/09876543/officers' },
  },
  SC123456: {
    company_name: 'NORTHERN SHELLFISH LLP',
    company_number: 'SC123456',
    company_status: 'insolvency-proceedings',
    type: 'llp',
    jurisdiction: 'scotland',
    date_of_creation: '1990-03-02',
    registered_office_address: {
      address_line_1: '1 Harbour Street',
      locality: 'Aberdeen',
      postal_code: 'AB11 5AA',
      country: 'Scotland',
    },
    has_insolvency_history: true,
    links: { self: '/company/SC123456' },
  },
};

/** Officer lists as GET /company/{number}/officers returns them; SC123456 has none (404). */
export const OFFICERS: Record<string, Record<string, unknown>[]> = {
  '03323845': [
    {
      name: 'COOKSON, Alastair John Ivor',
      officer_role: 'director',
      appointed_on: '2013-12-23',
      resigned_on: '2017-05-22',
      nationality: 'British',
      occupation: 'Investor',
      country_of_residence: 'England',
      date_of_birth: { month: 3, year: 1972 },
      address: SHELL_ADDRESS,
    },
    {
      name: 'HARRIS, Jane Elizabeth',
      officer_role: 'secretary',
      appointed_on: '2018-01-08',
      address: SHELL_ADDRESS,
    },
  ],
  '09876543': [
    {
      name: 'BLOGGS, Frederick',
      officer_role: 'director',
      appointed_on: '2015-11-03',
      resigned_on: '2020-02-28',
      nationality: 'British',
      occupation: 'Engineer',
      country_of_residence: 'England',
    },
    { name: 'HARRIS, Jane Elizabeth', officer_role: 'secretary', appointed_on: '2018-01-08' },
  ],
  '04366849': [
    {
      name: 'PATEL, Ravi',
      officer_role: 'director',
      appointed_on: '2002-01-31',
      resigned_on: '2019-06-11',
      nationality: 'British',
      occupation: 'Trader',
      country_of_residence: 'United Kingdom',
    },
  ],
};

function searchItem(p: Record<string, unknown>) {
  const address = p.registered_office_address as Record<string, string>;
  return {
    kind: 'searchresults#company',
    company_number: p.company_number,
    title: p.company_name,
    company_status: p.company_status,
    company_type: p.type,
    date_of_creation: p.date_of_creation,
    ...(p.date_of_cessation ? { date_of_cessation: p.date_of_cessation } : {}),
    address_snippet: [address.premises, address.address_line_1, address.locality, address.country, address.postal_code]
      .filter(Boolean)
      .join(', '),
    address,
    links: { self: `/company/${String(p.company_number)}` },
  };
}

export async function startCompaniesHouseStandIn(
  options: CompaniesHouseStandInOptions,
): Promise<CompaniesHouseStandIn> {
  const limit = options.limit ?? 600;
  const windowSeconds = options.windowSeconds ?? 300;
  const expectedAuth = `Basic ${Buffer.from(`${options.apiKey}:`).toString('base64')}`;
  const requests = new Map<string, number>();
  let windowStart = Math.floor(Date.now() / 1000);
  let used = 0;
  const failures: number[] = [];
  const untitledFor: string[] = [];

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.set(url.pathname, (requests.get(url.pathname) ?? 0) + 1);

    const now = Math.floor(Date.now() / 1000);
    if (now >= windowStart + windowSeconds) {
      windowStart = now;
      used = 0;
    }
    used++;
    const headers = {
      'content-type': 'application/json',
      'x-ratelimit-limit': String(limit),
      'x-ratelimit-remain': String(Math.max(0, limit - used)),
      'x-ratelimit-reset': String(windowStart + windowSeconds),
      'x-ratelimit-window': `${windowSeconds / 60}m`,
    };
    const send = (status: number, body: unknown) => res.writeHead(status, headers).end(JSON.stringify(body));

    const failure = failures.shift();
    if (failure)
      return res
        .writeHead(failure, { ...headers, 'content-type': 'text/html' })
        .end(`<html><body>${failure}</body></html>`);
    if (used > limit) return send(429, { error: 'Too Many Requests', type: 'ch:service' });
    if (req.headers.authorization !== expectedAuth)
      return send(401, { error: 'Invalid Authorization', type: 'ch:service' });
    if (req.method !== 'GET') return send(405, { error: 'Method Not Allowed', type: 'ch:service' });

    if (url.pathname === '/search/companies') {
      const q = (url.searchParams.get('q') ?? '').toLowerCase();
      const perPage = Number(url.searchParams.get('items_per_page') ?? 20);
      const start = Number(url.searchParams.get('start_index') ?? 0);
      const matches = Object.values(PROFILES).filter((p) => String(p.company_name).toLowerCase().includes(q));
      const items: Record<string, unknown>[] = matches.map(searchItem);
      if (untitledFor.some((u) => q.includes(u.toLowerCase()))) {
        items.push({
          kind: 'searchresults#company',
          company_number: '00000001',
          company_status: 'active',
          company_type: 'ltd',
          address_snippet: '1 Nowhere Street, London',
        });
      }
      return send(200, {
        items: items.slice(start, start + perPage),
        items_per_page: perPage,
        kind: 'search#companies',
        start_index: start,
        page_number: Math.floor(start / perPage) + 1,
        total_results: items.length,
      });
    }
    const company = /^\/company\/([A-Z0-9]+)(\/officers)?$/.exec(url.pathname);
    const profile = company?.[1] ? PROFILES[company[1]] : undefined;
    if (!company?.[1] || !profile)
      return send(404, { errors: [{ error: 'company-profile-not-found', type: 'ch:service' }] });
    if (!company[2]) return send(200, profile);
    const officers = OFFICERS[company[1]];
    if (!officers) return send(404, { errors: [{ error: 'not-found', type: 'ch:service' }] });
    return send(200, {
      items: officers,
      items_per_page: Number(url.searchParams.get('items_per_page') ?? 35),
      kind: 'officer-list',
      start_index: 0,
      total_results: officers.length,
      active_count: officers.filter((o) => !o.resigned_on).length,
      resigned_count: officers.filter((o) => o.resigned_on).length,
    });
  });

  const { baseUrl, close } = await listenLocal(server);
  return {
    baseUrl,
    requests,
    totalRequests: () => [...requests.values()].reduce((a, b) => a + b, 0),
    failNext: (status, count = 1) => failures.push(...Array.from({ length: count }, () => status)),
    addUntitledSearchItem: (query) => untitledFor.push(query),
    close,
  };
}
