/**
 * bench/maps: crawlMaps jobs of 20 results with photos, end to end: submitted through the real API
 * (in this process), run by the production worker set (in this process) on the local stack, against
 * the Google Places stand-in (test/stand-ins/google-places.ts: search pages, photo addresses and
 * image bytes on 127.0.0.1). Measures submit -> completed per job, one job at a time, and the
 * provider requests per job; prints p50/p95 and writes JSON to bench/results/. Spec §1.1: 30-90 s
 * for 20 results with a real provider; the target here is p50 < 3 s.
 *   npm run bench:maps -- [--jobs 20] [--latency 0]
 * `--latency` delays every stand-in API answer (ms), as a real provider's round trip does.
 */
import { startGooglePlacesStandIn } from '../test/stand-ins/google-places';
import { args, stats, writeResult } from './support';
import { startBenchService } from './service';

const KEY = 'bench-places-key-0123456789';

async function main(): Promise<void> {
  const opts = args({ jobs: 20, latency: 0 });
  const places = await startGooglePlacesStandIn({ apiKey: KEY });
  places.setDelay(opts.latency);
  const tag = `m${Date.now().toString(36)}`;
  const service = await startBenchService(tag, 'maps', {
    RATE_LIMIT_ENABLED: 'false',
    USER_URL_ALLOW_HOSTS: '127.0.0.1',
    GOOGLE_PLACES_BASE_URL: places.baseUrl,
    GOOGLE_PLACES_API_KEY: KEY,
  });
  const { call } = service;

  const runOne = async (i: number): Promise<{ ms: number; requests: number }> => {
    const before = places.requests.length;
    const started = performance.now();
    // A different query per job: an identical payload would be answered by the earlier job.
    const submitted = await call('/api/v1/jobs/crawlMaps/submit', {
      search_query: `bakery in Leeds ${i}`,
      max_results: 20,
      dedupe_enabled: false,
    });
    if (submitted.status !== 201)
      throw new Error(`submit answered ${submitted.status}: ${JSON.stringify(submitted.json)}`);
    for (;;) {
      const s = await call(`/api/v1/jobs/${String(submitted.json.job_id)}/status`);
      if (s.json.status === 'completed') break;
      if (s.json.status === 'failed') throw new Error(`job failed: ${String(s.json.error_message)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const ms = performance.now() - started;
    const result = await call(`/api/v1/jobs/${String(submitted.json.job_id)}/results`);
    const businesses = (result.json.data as { businesses: { image_url: string | null }[] }).businesses;
    if (businesses.length !== 20 || businesses.some((b) => !b.image_url?.includes('/maps/photos/')))
      throw new Error('a job came back without 20 stored photos');
    return { ms, requests: places.requests.length - before };
  };

  try {
    // One warm-up job: the worker's first workflow task and the bucket creation are not part of a job's time.
    await runOne(-1);
    const latencies: number[] = [];
    const requests: number[] = [];
    const started = performance.now();
    for (let i = 0; i < opts.jobs; i++) {
      const r = await runOne(i);
      latencies.push(r.ms);
      requests.push(r.requests);
    }
    const s = stats(latencies, (performance.now() - started) / 1000);
    const result = {
      bench: 'maps',
      jobs: opts.jobs,
      results_per_job: 20,
      stand_in_latency_ms: opts.latency,
      provider_requests_per_job: requests[0],
      job_ms: s,
      target_p50_ms: 3000,
      meets_target: s.p50_ms < 3000,
    };
    process.stdout.write(
      `crawlMaps, 20 results with photos, ${opts.jobs} jobs one at a time (stand-in latency ${opts.latency} ms, ${requests[0]} provider requests per job)\n`,
    );
    process.stdout.write(
      `  submit -> completed: p50 ${s.p50_ms} ms, p95 ${s.p95_ms} ms, max ${s.max_ms} ms (target p50 < 3000 ms: ${result.meets_target ? 'met' : 'NOT met'})\n`,
    );
    process.stdout.write(`  written to ${writeResult('maps', result)}\n`);
  } finally {
    await service.close();
    await places.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:maps failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
