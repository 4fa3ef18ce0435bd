import { CAPTURE_POLICY } from '../../jobs/crawl-landing';
import { notFound } from '../../lib/errors';
import { UUID } from '../../lib/ids';
import type { Storage } from '../../lib/storage';
import type { ApiRouter } from '../routing';
import { captureParams } from '../schemas/captures';

const CLIENT_ID = /^cli_[a-z0-9]{1,64}$/i;
const NOT_FOUND = 'no such capture';

/**
 * Headers of a capture shown in a browser (issue 38 item 5). `sandbox` puts the document in an
 * origin of its own with no script, forms, popups or top navigation, whatever got into it; the
 * policy also allows no script source; no referrer tells the hosts of images left as links where
 * the capture is. The media bucket cannot send a Content-Security-Policy (MinIO stores other
 * headers as x-amz-meta-*): its copy is a download, and this route is where a capture is looked at.
 */
export const CAPTURE_HEADERS = {
  'Content-Security-Policy': `${CAPTURE_POLICY}; sandbox`,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Disposition': 'inline; filename="page.html"',
  'Cache-Control': 'no-cache',
};

/**
 * GET /api/v1/captures/{client_id}/landings/{job_id}/page.html: a crawlLanding capture's page.html,
 * rendered sandboxed. Public, as the media bucket's copy is (the address is the capability: it
 * names the client's bucket and the job's UUID); it reads that one object and no row.
 */
export function captureRoutes(api: ApiRouter, storage: Storage): void {
  api.add({
    method: 'get',
    path: '/api/v1/captures/{client_id}/landings/{job_id}/page.html',
    operationId: 'landingCapturePage',
    summary: "A landing capture's HTML bundle, rendered sandboxed (html_bundle_url)",
    description:
      'The page.html of a crawlLanding job as html_bundle_url links it, served with Content-Security-Policy: sandbox (an origin of its own, no script of any kind, no forms or popups), X-Content-Type-Options: nosniff and Referrer-Policy: no-referrer. ' +
      'No credential: like the copy in the media bucket (a download there: Content-Disposition attachment), the address is what gives access. Unknown client, job or capture -> 404.',
    tags: ['jobs'],
    security: 'none',
    params: captureParams,
    responses: {
      200: { description: 'The captured page', contentType: 'text/html' },
      404: { description: 'No such capture' },
    },
    handler: async (ctx, { params }) => {
      if (!CLIENT_ID.test(params.client_id) || !UUID.test(params.job_id)) throw notFound(NOT_FOUND);
      const body = await storage.streamIfExists(
        storage.bucketFor(params.client_id),
        `landings/${params.job_id.toLowerCase()}/page.html`,
      );
      if (!body) throw notFound(NOT_FOUND);
      ctx.set(CAPTURE_HEADERS);
      ctx.status = 200;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = body;
    },
  });
}
