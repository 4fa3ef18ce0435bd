import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenLocal } from './listen';

/**
 * A stand-in for the EU VIES REST API's POST check-vat-number on 127.0.0.1, in its real wire format
 * (../../../shared/providers.md, "EU VIES VAT check"): `---` for withheld names and addresses,
 * `valid:false` for unknown numbers, and failures as `{"actionSucceed":false,"errorWrappers":[...]}`,
 * which tests can script, with HTTP 200 as VIES sometimes sends them. A test fixture only.
 */

interface Registered {
  name: string;
  address: string;
}

/** Registered numbers, keyed by country code + number. Germany withholds name and address. */
export const REGISTERED: Record<string, Registered> = {
  DE282741168: { name: '---', address: '---' },
  IE6388047V: { name: 'GOOGLE IRELAND LIMITED', address: '3RD FLOOR, GORDON HOUSE, BARROW STREET\nDUBLIN 4' },
  NL004495445B01: { name: 'KONINKLIJKE PHILIPS N.V.', address: 'HIGH TECH CAMPUS 00052\n5656AG EINDHOVEN' },
};

const MEMBER_STATES = new Set([
  'AT',
  'BE',
  'BG',
  'CY',
  'CZ',
  'DE',
  'DK',
  'EE',
  'EL',
  'ES',
  'FI',
  'FR',
  'HR',
  'HU',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SE',
  'SI',
  'SK',
  'XI',
]);

export interface ScriptedFailure {
  /** VIES error code, e.g. MS_MAX_CONCURRENT_REQ. */
  error: string;
  /** HTTP status to send it with. Default 200, as VIES sometimes does. */
  status?: number;
  /** Send an HTML error page instead of errorWrappers, as a gateway in front of VIES does. */
  html?: boolean;
}

export interface ViesStandIn {
  baseUrl: string;
  /** POSTs to check-vat-number, by country code + number. */
  requests: Map<string, number>;
  totalRequests(): number;
  /** Queue failures to answer for `vat` (country code + number) before it answers normally. */
  failNext(vat: string, failures: ScriptedFailure[]): void;
  close(): Promise<void>;
}

const MESSAGES: Record<string, string> = {
  INVALID_INPUT: 'The provided CountryCode is invalid or the VAT number is empty',
  MS_MAX_CONCURRENT_REQ:
    'Your Request for VAT validation has not been processed; the maximum number of concurrent requests for this Member State has been reached.',
  MS_UNAVAILABLE: 'The Member State service is unavailable, try again later',
  SERVICE_UNAVAILABLE: 'The VIES VAT service is unavailable, try again later',
};

export async function startViesStandIn(): Promise<ViesStandIn> {
  const requests = new Map<string, number>();
  const scripts = new Map<string, ScriptedFailure[]>();

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const fail = (status: number, error: string) =>
      send(status, { actionSucceed: false, errorWrappers: [{ error, message: MESSAGES[error] ?? error }] });
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://127.0.0.1').pathname !== '/check-vat-number') {
      return send(404, { actionSucceed: false, errorWrappers: [{ error: 'NOT_FOUND', message: 'Not Found' }] });
    }
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      let input: { countryCode?: unknown; vatNumber?: unknown };
      try {
        input = JSON.parse(raw) as typeof input;
      } catch {
        return fail(400, 'INVALID_INPUT');
      }
      const countryCode = typeof input.countryCode === 'string' ? input.countryCode : '';
      const vatNumber = typeof input.vatNumber === 'string' ? input.vatNumber : '';
      const key = `${countryCode}${vatNumber}`;
      requests.set(key, (requests.get(key) ?? 0) + 1);

      const scripted = scripts.get(key)?.shift();
      if (scripted?.html)
        return res
          .writeHead(scripted.status ?? 503, { 'content-type': 'text/html' })
          .end(`<html><body><h1>${scripted.error}</h1></body></html>`);
      if (scripted) return fail(scripted.status ?? 200, scripted.error);
      if (!MEMBER_STATES.has(countryCode) || !/^[0-9A-Z+*]{2,12}$/.test(vatNumber)) return fail(400, 'INVALID_INPUT');

      const registered = REGISTERED[key];
      return send(200, {
        countryCode,
        vatNumber,
        requestDate: new Date().toISOString(),
        valid: registered !== undefined,
        requestIdentifier: '',
        name: registered?.name ?? '---',
        address: registered?.address ?? '---',
        traderName: '---',
        traderStreet: '---',
        traderPostalCode: '---',
        traderCity: '---',
        traderCompanyType: '---',
        traderNameMatch: 'NOT_PROCESSED',
        traderStreetMatch: 'NOT_PROCESSED',
        traderPostalCodeMatch: 'NOT_PROCESSED',
        traderCityMatch: 'NOT_PROCESSED',
        traderCompanyTypeMatch: 'NOT_PROCESSED',
      });
    });
  });

  const { baseUrl, close } = await listenLocal(server);
  return {
    baseUrl,
    requests,
    totalRequests: () => [...requests.values()].reduce((a, b) => a + b, 0),
    failNext: (vat, failures) => scripts.set(vat, [...(scripts.get(vat) ?? []), ...failures]),
    close,
  };
}
