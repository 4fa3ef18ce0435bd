/**
 * The company record of crawlCompanyData (spec §2.4) and the typed failures of the registry adapters.
 * Each error carries a stable `type`, used as the Temporal ApplicationFailure type, and says whether
 * a retry can help, so the activity can turn it into a retryable or non-retryable failure.
 */

export type CompanyStatus = 'active' | 'dissolved' | 'liquidation';

export interface CompanyAddress {
  line_1: string | null;
  line_2?: string | null;
  city?: string | null;
  region?: string | null;
  postal_code?: string | null;
  country: string | null;
}

export interface CompanyIndustry {
  sic_codes: string[];
  nace_codes: string[];
  description: string | null;
}

export interface CompanyOfficer {
  name: string;
  role: string | null;
  appointed_on: string | null;
  resigned_on: string | null;
  nationality: string | null;
  occupation: string | null;
  country_of_residence: string | null;
}

export interface CompanyMetadata {
  cached: boolean;
  /** ISO timestamp of when the registry answered. */
  retrieved_at: string;
  data_freshness: string;
  confidence_score: number;
  cache_expires_at: string | null;
}

/** Metadata of a record just read from its registry (the cache layer marks cached ones). */
export function liveMetadata(retrievedAt: string, confidence: number): CompanyMetadata {
  return {
    cached: false,
    retrieved_at: retrievedAt,
    data_freshness: 'live',
    confidence_score: confidence,
    cache_expires_at: null,
  };
}

export interface CompanyRecord {
  name: string;
  source: 'us_registry' | 'uk_registry';
  source_id: string;
  country_code: string;
  status: CompanyStatus;
  legal_form: string | null;
  registration_number: string;
  incorporation_date: string | null;
  address: CompanyAddress;
  industry: CompanyIndustry | null;
  officers: CompanyOfficer[];
  financials: Record<string, unknown> | null;
  vat_number: string | null;
  tax_id: string | null;
  lei: string | null;
  dissolution_date: string | null;
  metadata: CompanyMetadata;
  /** Provenance: the public registry page of this record. */
  source_url: string;
}

/** `data` of a VAT mode result. `company_name`/`company_address` keep the literal `---` a member state sends. */
export interface VatCheckResult {
  valid: boolean;
  vat_number: string;
  country_code: string;
  company_name: string | null;
  company_address: string | null;
  request_date: string;
}

/** Base of the adapters' typed failures. */
export abstract class CompanyDataError extends Error {
  /** Stable name for ApplicationFailure's `type`; a durable API, never renamed. */
  abstract readonly type: string;
  /** Whether trying again later can succeed. */
  abstract readonly retryable: boolean;
}

/** The registry has no company with that number. */
export class CompanyNotFoundError extends CompanyDataError {
  override readonly name = 'CompanyNotFoundError';
  readonly type = 'CompanyNotFound';
  readonly retryable = false;

  constructor(
    readonly registry: string,
    readonly companyNumber: string,
  ) {
    super(`company not found: ${companyNumber} (${registry})`);
  }
}

/** The registry refused our credentials: a configuration problem, not worth retrying. */
export class RegistryAuthError extends CompanyDataError {
  override readonly name = 'RegistryAuthError';
  readonly type = 'RegistryAuth';
  readonly retryable = false;

  constructor(readonly registry: string) {
    super(`the registry rejected the credentials (${registry})`);
  }
}

/** The registry's rate limit is exhausted; `retryAfterMs` says when its window resets. */
export class RegistryRateLimitedError extends CompanyDataError {
  override readonly name = 'RegistryRateLimitedError';
  readonly type = 'RegistryRateLimited';
  readonly retryable = true;

  constructor(
    readonly registry: string,
    readonly retryAfterMs: number,
  ) {
    super(`rate limited by ${registry}; retry in ${Math.ceil(retryAfterMs / 1000)} s`);
  }
}

/** The registry is down, overloaded or answered garbage; never a verdict about the company. */
export class RegistryUnavailableError extends CompanyDataError {
  override readonly name = 'RegistryUnavailableError';
  readonly type = 'RegistryUnavailable';
  readonly retryable = true;

  constructor(
    readonly registry: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${registry} is unavailable: ${reason}`, options);
  }
}

/** The input cannot be a valid identifier for the registry (e.g. VIES INVALID_INPUT). */
export class InvalidInputError extends CompanyDataError {
  override readonly name = 'InvalidInputError';
  readonly type = 'InvalidInput';
  readonly retryable = false;

  constructor(
    readonly registry: string,
    readonly input: string,
    detail: string,
  ) {
    super(`invalid input for ${registry}: ${detail}`);
  }
}
