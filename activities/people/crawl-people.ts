import { ApplicationFailure } from '@temporalio/activity';
import { CanonicalRecordModel } from '../../db/models/canonical-record';
import { JobModel } from '../../db/models/job';
import { DedupeRepository } from '../../db/repositories/dedupe';
import { JobResultStore } from '../../db/repositories/job-results';
import { jobOfActivity } from '../../db/repositories/jobs';
import { findBusinessByKey, findByNameWords, findByNaturalKey } from '../../db/repositories/resources';
import { crawlPeoplePayload, type CrawlPeopleResult } from '../../jobs/crawl-people';
import { naturalKeyOf } from '../../lib/idap';
import { domainOf } from '../../lib/normalize';
import type { CompanyOfficer, CompanyRecord } from '../company/types';
import { nameSimilarity } from '../company/companies-house';
import { parsePayload, type ActivityDeps, type JobActivityOutput } from '../deps';
import { crawlSiteData, CRAWL_TIME_LIMIT_MS } from '../site/crawl';
import { CrawlFailedError, type PagePeople } from '../site/crawler';
import {
  absorbPerson,
  emailPattern,
  guessEmails,
  matchesRoles,
  mergeSightings,
  officerSightings,
  proflinkSightings,
  teamSightings,
  type Person,
  type Sighting,
} from './people';

/** How alike a name must be to the company's for an IDAP business or registry record to be taken as it. */
const SAME_COMPANY = 0.8;

/** A registry record whose officers name the company's people. */
export interface KnownRegistry {
  source: string;
  source_id: string;
  name: string;
  source_url: string;
  officers: CompanyOfficer[];
}

/** What the workflow (workflows/people.ts) and the crawl need: the site, the company, how they were found. */
export interface PeoplePlan {
  website: string | null;
  domain: string | null;
  companyName: string | null;
  resolvedVia: 'payload' | 'idap_business' | 'registry' | null;
  resolution: string;
  registry: KnownRegistry | null;
  /** Set when no website is known yet and the payload names a registry: the workflow searches it, then calls resolvePeopleCompany. */
  registrySearch: { name: string; country: 'US' | 'GB' } | null;
  maxPages: number;
  maxResults: number;
  roles: string[];
}

const REGISTRY_NAMES: Record<string, string> = {
  uk_registry: 'UK registry (Companies House)',
  us_registry: 'US registry (SEC EDGAR)',
};

export function createPeopleActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const results = new JobResultStore(db, deps.storage);
  const dedupe = new DedupeRepository(db);

  async function clientOf(jobId: string): Promise<JobModel> {
    const job = await jobOfActivity(db, jobId);
    if (!job) throw ApplicationFailure.nonRetryable(`job ${jobId} does not exist`, 'InvalidInput');
    return job;
  }

  /** The client's business most like `name` that has a website, if one is alike enough. */
  async function businessNamed(
    clientId: string,
    name: string,
  ): Promise<{ name: string; website: string; domain: string } | undefined> {
    const ranked = (await findByNameWords(db, clientId, 'businesses', name))
      .map((r) => ({ r, score: nameSimilarity(name, String(r.data.name ?? '')) }))
      .filter(({ r, score }) => score >= SAME_COMPANY && domainOf(String(r.data.website ?? r.data.domain ?? '')))
      .sort((a, b) => b.score - a.score);
    const best = ranked[0]?.r;
    if (!best) return undefined;
    const domain = domainOf(String(best.data.website ?? best.data.domain)) as string;
    return {
      name: String(best.data.name),
      website: typeof best.data.website === 'string' ? best.data.website : `https://${domain}/`,
      domain,
    };
  }

  /** A company_registry record of the client (a crawlCompanyData lookup) with officers, by registry id or by name. */
  async function registryRecord(
    clientId: string,
    by: { name?: string | null; registry?: string; id?: string },
  ): Promise<KnownRegistry | null> {
    const key = naturalKeyOf('company_registry', { registry: by.registry, registry_id: by.id });
    let rows =
      'key' in key
        ? [await findByNaturalKey(db, clientId, 'company_registry', key.key)].filter((r) => r !== undefined)
        : [];
    if (rows.length === 0 && by.name) {
      rows = (await findByNameWords(db, clientId, 'company_registry', by.name)).filter(
        (r) => nameSimilarity(by.name as string, String(r.data.name ?? '')) >= SAME_COMPANY,
      );
    }
    const best = rows.find((r) => Array.isArray(r.data.officers) && r.data.officers.length > 0);
    if (!best) return null;
    return {
      source: String(best.data.source ?? best.data.registry),
      source_id: String(best.data.source_id ?? best.data.registry_id),
      name: String(best.data.name),
      source_url: String(best.data.source_url ?? ''),
      officers: best.data.officers as CompanyOfficer[],
    };
  }

  return {
    /**
     * The job's plan: the website (the payload's url or company_domain, else the client's IDAP business
     * named like company_name), the company's name, and a registry record with officers the client
     * already has (from crawlCompanyData). Reads Postgres only; idempotent.
     */
    async planPeople(input: { jobId: string; payload: Record<string, unknown> }): Promise<PeoplePlan> {
      const p = parsePayload(crawlPeoplePayload, input.payload);
      const job = await clientOf(input.jobId);
      const base = { maxPages: p.max_pages, maxResults: p.max_results, roles: p.roles, registrySearch: null };
      let website = p.url ?? (p.company_domain ? `https://${domainOf(p.company_domain)}/` : null);
      let domain = domainOf(website);
      let companyName = p.company_name ?? null;
      if (website && domain) {
        companyName ??=
          ((await findBusinessByKey(db, job.client_id, `domain:${domain}`))?.data.name as string | undefined) ?? null;
        return {
          ...base,
          website,
          domain,
          companyName,
          resolvedVia: 'payload',
          resolution: `the website given: ${website}`,
          registry: await registryRecord(job.client_id, { name: companyName }),
        };
      }
      const name = companyName as string;
      const business = await businessNamed(job.client_id, name);
      if (business) {
        website = business.website;
        domain = business.domain;
        return {
          ...base,
          website,
          domain,
          companyName: name,
          resolvedVia: 'idap_business',
          resolution: `the client's IDAP business "${business.name}" (${business.domain})`,
          registry: await registryRecord(job.client_id, { name }),
        };
      }
      const registry = await registryRecord(job.client_id, { name });
      const noBusiness = `none of the client's IDAP businesses is named like "${name}"`;
      if (p.country)
        return {
          ...base,
          website: null,
          domain: null,
          companyName: name,
          resolvedVia: null,
          resolution: noBusiness,
          registry,
          registrySearch: { name, country: p.country },
        };
      return {
        ...base,
        website: null,
        domain: null,
        companyName: name,
        resolvedVia: null,
        resolution: `no website for "${name}": ${noBusiness}; give url or company_domain, or country (US or GB) for a registry search`,
        registry,
      };
    },

    /**
     * After a registry search for a company without a known website: the official name of the best
     * match is looked up among the client's IDAP businesses again, and the client's record of it
     * (with officers) is used. Registry records carry no website, so the resolution says so when
     * none is found. Reads Postgres only.
     */
    async resolvePeopleCompany(input: {
      jobId: string;
      plan: PeoplePlan;
      records: CompanyRecord[];
    }): Promise<PeoplePlan> {
      const { plan } = input;
      const job = await clientOf(input.jobId);
      const registryName =
        REGISTRY_NAMES[input.records[0]?.source ?? ''] ?? `${plan.registrySearch?.country ?? ''} registry`;
      const match = [...input.records].sort(
        (a, b) => nameSimilarity(plan.companyName ?? '', b.name) - nameSimilarity(plan.companyName ?? '', a.name),
      )[0];
      if (!match || nameSimilarity(plan.companyName ?? '', match.name) < SAME_COMPANY) {
        return {
          ...plan,
          registrySearch: null,
          resolution: `no website for "${plan.companyName ?? ''}": ${plan.resolution}, and the ${registryName} has no company named like it`,
        };
      }
      const registry =
        plan.registry ??
        (await registryRecord(job.client_id, { registry: match.source, id: match.source_id, name: match.name }));
      const business = await businessNamed(job.client_id, match.name);
      if (business) {
        return {
          ...plan,
          registrySearch: null,
          registry,
          website: business.website,
          domain: business.domain,
          resolvedVia: 'registry',
          resolution: `the ${registryName} names it "${match.name}" (${match.source_id}); the client's IDAP business "${business.name}" (${business.domain})`,
        };
      }
      return {
        ...plan,
        registrySearch: null,
        registry,
        companyName: plan.companyName,
        resolution: `no website for "${plan.companyName ?? ''}": ${plan.resolution}; the ${registryName} knows "${match.name}" (${match.source_id}) but registry records carry no website, and no IDAP business is named like it`,
      };
    },

    /**
     * crawlPeople's work: the site's team, about and contact pages (crawlSite's crawler and team
     * extraction, without compendium or AI), the personal profiles it links, and the registry's current
     * officers, merged by name with their sources; the role filter; the company's address pattern
     * (guesses for the others); de-duplication in the canonical store (`contact`). Heartbeats every page
     * and second; a cancel aborts the crawl. Idempotent: the result row is overwritten, and canonical
     * records this job added itself still count as first seen.
     */
    async crawlPeople(input: { jobId: string; plan: PeoplePlan }): Promise<JobActivityOutput> {
      const { plan } = input;
      const job = await clientOf(input.jobId);
      const errors: CrawlPeopleResult['errors'] = [];
      let pages: PagePeople[] = [];
      let pagesCrawled = 0;
      if (plan.website) {
        try {
          const crawled = await crawlSiteData(
            deps,
            job.client_id,
            {
              url: plan.website,
              maxPages: plan.maxPages,
              extractTeam: true,
              compendium: { enabled: false, cleanupLevel: 'fit' },
              includePaths: [],
              excludePaths: [],
              respectRobots: true,
              timeLimitMs: CRAWL_TIME_LIMIT_MS,
            },
            { renderJs: false, storeCompendium: false },
          );
          pages = crawled.pagePeople;
          pagesCrawled = crawled.data.pages_crawled;
          errors.push(...crawled.data.errors);
        } catch (err) {
          if (!(err instanceof CrawlFailedError)) throw err;
          // Without officers there is nothing else to report: the crawl's failure is the job's.
          if (!plan.registry) throw ApplicationFailure.nonRetryable(err.message, err.type);
          errors.push({ url: plan.website, error: err.message });
        }
      } else if (!plan.registry) {
        throw ApplicationFailure.nonRetryable(plan.resolution, 'CompanyNotResolved');
      }

      const site = pages.flatMap(teamSightings);
      const profiles = pages.flatMap(proflinkSightings);
      const officers = plan.registry
        ? officerSightings(plan.registry.officers, plan.registry.source_url || plan.registry.source)
        : [];
      const sightings: Sighting[] = [...site, ...profiles, ...officers];
      const everyone = mergeSightings(sightings);
      const pattern = emailPattern(everyone);
      let people = everyone.filter((person) => matchesRoles(person.position, plan.roles)).slice(0, plan.maxResults);
      guessEmails(people, pattern);
      people = await deduplicate(job, people, plan);

      const sourcesUsed: CrawlPeopleResult['sources_used'] = [];
      if (site.length) sourcesUsed.push('site');
      if (profiles.length) sourcesUsed.push('proflink');
      if (officers.length && plan.registry)
        sourcesUsed.push(plan.registry.source === 'us_registry' ? 'us_registry' : 'uk_registry');
      const result: CrawlPeopleResult = {
        company: {
          name: plan.companyName ?? plan.registry?.name ?? null,
          domain: plan.domain,
          website: plan.website,
          resolved_via: plan.resolvedVia,
          resolution: plan.resolution,
          registry: plan.registry
            ? {
                source: plan.registry.source,
                source_id: plan.registry.source_id,
                name: plan.registry.name,
                source_url: plan.registry.source_url,
              }
            : null,
        },
        people: people as CrawlPeopleResult['people'],
        people_count: people.length,
        email_pattern: pattern,
        pages_crawled: pagesCrawled,
        sources_used: sourcesUsed,
        errors,
      };
      await results.save(input.jobId, result);
      return { resultsCount: people.length };
    },
  };

  /**
   * The people through the canonical store (record_type contact): a person matching one an earlier
   * person of this list just created is merged into that one; each keeps its canonical id and whether
   * the client's store held it before this job (records this job created on an earlier attempt count as new).
   */
  async function deduplicate(
    job: JobModel,
    people: Person[],
    plan: PeoplePlan,
  ): Promise<(Person & { canonical_id: number | null; dedupe_unique: boolean })[]> {
    if (!config.DEDUPE_ENABLED || people.length === 0)
      return people.map((p) => ({ ...p, canonical_id: null, dedupe_unique: true }));
    const sourceWorker = `crawlPeople/${job.id}`;
    // No company_domain in the records: the store matches on it, and colleagues share it.
    const checked = await dedupe.check({
      clientId: job.client_id,
      recordType: 'contact',
      records: people.map((p) => ({
        full_name: p.full_name,
        first_name: p.first_name,
        last_name: p.last_name,
        position: p.position,
        email: p.email,
        proflink_url: p.proflink_url,
        company_name: plan.companyName ?? plan.domain,
      })),
      addToCanonical: true,
      campaignId: job.campaign_id,
      threshold: 0.5,
      sourceWorker,
    });
    const matched = checked.flatMap((c) => (c.isDuplicate ? [c.matchedId] : []));
    const ownIds = new Set(
      matched.length === 0
        ? []
        : (
            await CanonicalRecordModel.forClient<CanonicalRecordModel>(db, job.client_id)
              .whereIn('id', matched)
              .where('source_worker', sourceWorker)
              .select('id')
          ).map((r) => Number(r.id)),
    );
    const out: (Person & { canonical_id: number | null; dedupe_unique: boolean })[] = [];
    const byCanonical = new Map<number, Person & { canonical_id: number | null; dedupe_unique: boolean }>();
    people.forEach((p, i) => {
      const c = checked[i];
      const id = !c ? null : c.isDuplicate ? c.matchedId : c.canonicalId;
      const earlier = id !== null ? byCanonical.get(id) : undefined;
      if (earlier) {
        // The same person under another spelling (same e-mail or profile): one entry, every source.
        absorbPerson(earlier, p);
        return;
      }
      const entry = { ...p, canonical_id: id, dedupe_unique: !c || !c.isDuplicate || ownIds.has(c.matchedId) };
      out.push(entry);
      if (id !== null) byCanonical.set(id, entry);
    });
    return out;
  }
}

export type PeopleActivities = ReturnType<typeof createPeopleActivities>;
