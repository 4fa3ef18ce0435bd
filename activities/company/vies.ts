import { setTimeout as sleep } from 'node:timers/promises';
import { OutboundError, type OutboundClient, type OutboundResponse } from '../../lib/outbound';
import { InvalidInputError, RegistryUnavailableError, type VatCheckResult } from './types';

/**
 * EU VIES VAT number check (../shared/providers.md, "EU VIES VAT check") over the REST API's POST
 * endpoint. VIES is intermittent: member-state outages and concurrency limits come back as
 * `errorWrappers`, sometimes with HTTP 200. Those are retried here with exponential backoff and in
 * the end throw RegistryUnavailableError; they are never reported as an invalid number.
 */

export const VIES_BASE_URL = 'https://ec.europa.eu/taxation_customs/vies/rest-api';
const REGISTRY = 'EU VIES';

/** Errors that say "try again later", not anything about the number. */
const TRANSIENT = new Set([
  'SERVICE_UNAVAILABLE',
  'MS_UNAVAILABLE',
  'TIMEOUT',
  'GLOBAL_MAX_CONCURRENT_REQ',
  'GLOBAL_MAX_CONCURRENT_REQ_TIME',
  'MS_MAX_CONCURRENT_REQ',
  'MS_MAX_CONCURRENT_REQ_TIME',
]);

export interface ViesOptions {
  /** Default VIES_BASE_URL; tests point it at a stand-in. */
  baseUrl?: string;
  http: OutboundClient;
  /** Retries after the first attempt for transient errors. Default 3. */
  retries?: number;
  /** First backoff delay, doubled on each retry. Default 1000. */
  backoffMs?: number;
}

interface ViesAnswer {
  countryCode?: string;
  vatNumber?: string;
  requestDate?: string;
  valid?: boolean;
  name?: string | null;
  address?: string | null;
  userError?: string;
  actionSucceed?: boolean;
  errorWrappers?: { error?: string; message?: string }[];
}

/** One attempt's outcome: a result, or a transient failure worth another try. */
type Attempt = { result: VatCheckResult } | { transient: string; cause?: unknown };

export class ViesClient {
  private readonly baseUrl: string;
  private readonly http: OutboundClient;
  private readonly retries: number;
  private readonly backoffMs: number;

  constructor(opts: ViesOptions) {
    this.baseUrl = (opts.baseUrl ?? VIES_BASE_URL).replace(/\/+$/, '');
    this.http = opts.http;
    this.retries = opts.retries ?? 3;
    this.backoffMs = opts.backoffMs ?? 1000;
  }

  /**
   * Checks a VAT number written with its country prefix (DE282741168; spaces, dots and dashes are
   * ignored). `vat_number` in the result is the number without the prefix, as VIES writes it.
   */
  async check(vatNumber: string, signal?: AbortSignal): Promise<VatCheckResult> {
    const { countryCode, number } = splitVatNumber(vatNumber);
    let last: { transient: string; cause?: unknown } | undefined;
    for (let attempt = 0; attempt <= this.retries; attempt++) {
      if (attempt > 0) await sleep(this.backoffMs * 2 ** (attempt - 1), undefined, { signal });
      const outcome = await this.attempt(countryCode, number, vatNumber, signal);
      if ('result' in outcome) return outcome.result;
      last = outcome;
    }
    // With retries left to the caller (the Temporal activity), the count would mislead.
    const tries = this.retries > 0 ? ` after ${this.retries + 1} attempts` : '';
    throw new RegistryUnavailableError(REGISTRY, `${last?.transient ?? 'no answer'}${tries}`, { cause: last?.cause });
  }

  private async attempt(countryCode: string, number: string, input: string, signal?: AbortSignal): Promise<Attempt> {
    let res: OutboundResponse;
    try {
      res = await this.http.fetch(`${this.baseUrl}/check-vat-number`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ countryCode, vatNumber: number }),
        signal,
        provider: 'vies',
      });
    } catch (err) {
      // The caller's abort and the SSRF guard's refusal end the check; network trouble is retried.
      if (signal?.aborted || !(err instanceof OutboundError) || err.kind === 'blocked') throw err;
      return { transient: err.message, cause: err };
    }

    let body: ViesAnswer | undefined;
    try {
      body = res.json<ViesAnswer>();
    } catch {
      body = undefined;
    }
    // VIES reports failures in the body, sometimes with HTTP 200: read it before the status.
    const error =
      body?.errorWrappers?.[0]?.error ??
      (body?.actionSucceed === false ? 'UNKNOWN_ERROR' : undefined) ??
      userErrorFailure(body?.userError);
    if (error) {
      if (TRANSIENT.has(error)) return { transient: error };
      if (error === 'INVALID_INPUT')
        throw new InvalidInputError(
          REGISTRY,
          input,
          `${countryCode}${number} is not a well-formed VAT number (INVALID_INPUT)`,
        );
      const message = body?.errorWrappers?.[0]?.message;
      throw new RegistryUnavailableError(REGISTRY, message ? `${error}: ${message}` : error);
    }
    if (res.status === 429 || res.status >= 500) return { transient: `HTTP ${res.status}` };
    if (res.status < 200 || res.status >= 300 || typeof body?.valid !== 'boolean') {
      throw new RegistryUnavailableError(REGISTRY, `unexpected answer (HTTP ${res.status})`);
    }
    return {
      result: {
        valid: body.valid,
        vat_number: body.vatNumber || number,
        country_code: body.countryCode || countryCode,
        // `---` (withheld by the member state) is kept as sent; only an absent or empty value is null.
        company_name: body.name || null,
        company_address: body.address || null,
        request_date: body.requestDate || new Date().toISOString(),
      },
    };
  }
}

/** The GET endpoint's `userError`; VALID and INVALID are answers, not failures. */
function userErrorFailure(userError: string | undefined): string | undefined {
  return userError && userError !== 'VALID' && userError !== 'INVALID' ? userError : undefined;
}

/** "DE 282.741-168" -> DE, 282741168. Greece is EL in VIES, not its ISO code GR. */
function splitVatNumber(raw: string): { countryCode: string; number: string } {
  const compact = raw.replace(/[\s.-]/g, '').toUpperCase();
  const match = /^([A-Z]{2})([A-Z0-9+*]{2,12})$/.exec(compact);
  if (!match?.[1] || !match[2]) {
    throw new InvalidInputError(REGISTRY, raw, `"${raw}" is not a VAT number with a country prefix (e.g. DE282741168)`);
  }
  return { countryCode: match[1] === 'GR' ? 'EL' : match[1], number: match[2] };
}
