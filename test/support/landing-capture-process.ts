import { LandingBrowser } from '../../activities/landing/browser';
import { captureLanding } from '../../activities/landing/capture';
import { crawlLandingPayload } from '../../jobs/crawl-landing';
import { parseConfig } from '../../lib/config';
import { OutboundClient } from '../../lib/outbound';
import { Storage } from '../../lib/storage';

/**
 * One landing capture in a Node process of its own, so a test can read what the process writes to
 * stderr (Node's warnings go to the real process, which a Jest test cannot listen on):
 * `tsx test/support/landing-capture-process.ts <url>`. Prints the capture's errors as JSON.
 */
async function main(url: string): Promise<void> {
  const config = parseConfig(process.env);
  const http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test' });
  const browser = new LandingBrowser(http, config.CHROMIUM_PATH, 60_000);
  try {
    const payload = crawlLandingPayload.parse({
      url,
      options: { extract_content: false, capture_full_page: false, capture_html_bundle: false },
    });
    const llm = { extractJson: () => Promise.reject(new Error('not used')) };
    const deps = {
      browser,
      http,
      storage: Storage.fromConfig(config),
      llm,
      userAgent: 'leadjobs-test',
      maxResourceBytes: 1 << 22,
      maxBundleBytes: 1 << 24,
      maxConcurrentSubresources: 16,
      maxCaptureBytes: 1 << 26,
      apiBaseUrl: 'http://127.0.0.1:3000',
    };
    const result = await captureLanding(deps, {
      jobId: 'b1a7e1a4-0000-4000-8000-000000000009',
      clientId: 'cli_capture',
      payload,
      signal: new AbortController().signal,
      ceilingMs: 30000,
    });
    process.stdout.write(`${JSON.stringify(result.errors)}\n`);
  } finally {
    await browser.close();
    await http.close();
  }
}

main(process.argv[2] ?? '').then(
  // Warnings are written on a later tick: let them out before exiting.
  () => setImmediate(() => process.exit(0)),
  (err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exit(1);
  },
);
