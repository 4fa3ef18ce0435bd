import type { SiteRow } from '../../../db/repositories/content';
import { AppError, notFound, ValidationError } from '../../../lib/errors';
import { lookupTxt, missingRecord, siteVerificationRecord } from '../../../lib/domain-proof';
import { clientIdOf } from '../../context';
import type { ApiRouter } from '../../routing';
import { siteCreateBody, siteIdParams, siteListResponse, siteResponse } from '../../schemas/content';
import { siteView } from '../../presenters/content';
import { dash, type ContentDeps } from './shared';

/** The sites a client's public blog answers on, and their DNS proof. */
export function sitesRoutes(api: ApiRouter, { repo, dnsServers }: ContentDeps): void {
  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/sites',
    operationId: 'createContentSite',
    summary: "Register a domain whose public content endpoints serve this client's posts",
    description:
      "The site answers X-Content-Domain once verified: publish the TXT record the answer gives (`verification`) on the domain, then call POST /api/v1/dashboard/content/sites/{site_id}/verify. Any client may register any domain (registering grants nothing): one verified by another client passes to this one when it verifies with that client's record gone from the domain.",
    body: siteCreateBody,
    responses: {
      201: { description: 'Registered, not verified yet', schema: siteResponse },
      409: { description: 'This client has registered the domain already' },
    },
    handler: async (ctx, { body }) => {
      ctx.status = 201;
      ctx.body = siteView(await repo.createSite(clientIdOf(ctx), body.domain));
    },
  });

  api.add({
    ...dash,
    method: 'get',
    path: '/api/v1/dashboard/content/sites',
    operationId: 'listContentSites',
    summary: "The client's sites",
    responses: { 200: { description: 'Every site of the client', schema: siteListResponse } },
    handler: async (ctx) => {
      const sites = await repo.listSites(clientIdOf(ctx));
      ctx.body = { sites: sites.map(siteView), total: sites.length };
    },
  });

  api.add({
    ...dash,
    method: 'post',
    path: '/api/v1/dashboard/content/sites/{site_id}/verify',
    operationId: 'verifyContentSite',
    summary: "Check the site's DNS TXT record and, when found, verify the site",
    description:
      "Looks up the TXT records of the domain for `verification.value`. Found: the site is verified and answers X-Content-Domain. A domain another client has verified moves to this site when that client's record is no longer among them (the domain changed hands; the other site becomes unverified and its posts are no longer served); while it is, the answer is 409. Verifying an already verified site changes nothing.",
    params: siteIdParams,
    responses: {
      200: { description: 'Verified', schema: siteResponse },
      404: { description: 'No such site for this client' },
      409: { description: 'Another client has verified the domain and its TXT record is still published' },
      422: { description: 'The TXT record was not found (the reason says what the lookup gave)' },
    },
    handler: async (ctx, { params }) => {
      const clientId = clientIdOf(ctx);
      const site = await repo.getSite(clientId, params.site_id);
      if (!site) throw notFound('site not found');
      let previous: SiteRow | undefined;
      if (site.verified_at === null) {
        const record = siteVerificationRecord(site.verification_token);
        const txt = await lookupTxt(site.domain, dnsServers);
        const missing = missingRecord(site.domain, txt, record);
        if (missing)
          throw new ValidationError([
            {
              type: 'domain_not_verified',
              loc: ['path', 'site_id'],
              msg: `${missing}: publish the TXT record "${record}" on ${site.domain} and try again`,
            },
          ]);
        // A domain another client verified passes to this one once that client's record is gone from
        // its DNS (the domain changed hands); while it is published, the domain stays where it is.
        previous = await repo.verifiedElsewhere(clientId, site.domain);
        if (previous && missingRecord(site.domain, txt, siteVerificationRecord(previous.verification_token)) === null) {
          throw new AppError(
            409,
            `${site.domain} is verified by another client, whose TXT record is still published; it passes to you once that record is removed`,
            'conflict',
          );
        }
      }
      const verified = await repo.verifySite(clientId, site.id, previous);
      if (!verified) throw notFound('site not found');
      ctx.body = siteView(verified);
    },
  });

  api.add({
    ...dash,
    method: 'delete',
    path: '/api/v1/dashboard/content/sites/{site_id}',
    operationId: 'deleteContentSite',
    summary: 'Remove a site (the public endpoints then answer 422 for its domain)',
    params: siteIdParams,
    responses: { 204: { description: 'Removed' }, 404: { description: 'No such site for this client' } },
    handler: async (ctx, { params }) => {
      if (!(await repo.deleteSite(clientIdOf(ctx), params.site_id))) throw notFound('site not found');
      ctx.status = 204;
    },
  });
}
