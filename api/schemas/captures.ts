import { z } from 'zod';
import { uuidParam } from './params';

export const captureParams = z.object({
  client_id: z.string().describe("the capture's client (as in html_bundle_url)"),
  job_id: uuidParam('the crawlLanding job'),
});
