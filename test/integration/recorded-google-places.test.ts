import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { MapsError } from '../../activities/maps/errors';
import { GooglePlacesClient } from '../../activities/maps/google-places';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';
import { describeRecordedGithub, recordedGithub } from '../support/recorded-github';

/**
 * Google Places API (New) on the one answer of it found recorded from the live service: the
 * error envelope for an invalid key, recorded by roundly-consulting/google-places-for-laravel
 * (test/fixtures/recorded/SOURCES.md, "Google Places API (New)"). No recorded searchText, details
 * or photo answer was found; those are exercised on the stand-in only (test/integration/maps.test.ts).
 * Not committed: laid out from a folder by test/support/recorded-github.ts; skipped without it.
 */

/** The recorded body (read in beforeAll: absent, the tests are skipped and it is never read). */
let INVALID_KEY = '';

let http: OutboundClient;
let server: { baseUrl: string; close: () => Promise<void> };
let client: GooglePlacesClient;
const requests: { method: string; path: string; key?: string }[] = [];

beforeAll(async () => {
  INVALID_KEY = recordedGithub('google-places', 'error-api-key-invalid.json').toString('utf8');
  const s = createServer((req, res) => {
    requests.push({
      method: req.method ?? 'GET',
      path: new URL(req.url ?? '/', 'http://replay').pathname,
      key: req.headers['x-goog-api-key'] as string | undefined,
    });
    req.resume();
    req.on('end', () => res.writeHead(400, { 'content-type': 'application/json; charset=UTF-8' }).end(INVALID_KEY));
  });
  server = await listenLocal(s);
  http = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'leadjobs-test/1.0', timeoutMs: 5000 });
  client = new GooglePlacesClient({ baseUrl: server.baseUrl, apiKey: 'AIza-not-a-key', http });
});

afterAll(async () => {
  await http?.close();
  await server?.close();
});

beforeEach(() => {
  requests.length = 0;
});

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describeRecordedGithub('google-places')('Google Places (New) client on a recorded answer', () => {
  test('the recording is the file SOURCES.md names', () => {
    expect(createHash('sha256').update(INVALID_KEY).digest('hex')).toBe(
      'b008b398887d70dba1758c75ebdcac1533baeacc6fd17f76efbc9dd0c6321d57',
    );
  });

  test('an invalid key on a text search is a rejected key, not a bad request, and is not retried', async () => {
    const err = await failure(
      client.searchText({ textQuery: 'bakery in Leeds', pageSize: 20 }, new AbortController().signal),
    );
    expect(err).toBeInstanceOf(MapsError);
    expect(err).toMatchObject({
      type: 'ProviderCredentialsRejected',
      retryable: false,
      message: 'Google Places API rejected the key (API_KEY_INVALID): check GOOGLE_PLACES_API_KEY',
    });
    expect(requests).toEqual([{ method: 'POST', path: '/v1/places:searchText', key: 'AIza-not-a-key' }]);
  });

  test('on place details the same 400 INVALID_ARGUMENT (the status a malformed place id gets too) is still the key, not "business not found"', async () => {
    const err = await failure(
      client.details('ChIJN1t_tDeuEmsRUsoyG83frY4', { reviews: true }, new AbortController().signal),
    );
    expect(err).toMatchObject({ type: 'ProviderCredentialsRejected', retryable: false });
    expect(requests[0]?.path).toBe('/v1/places/ChIJN1t_tDeuEmsRUsoyG83frY4');
  });

  test('and on photo media', async () => {
    const err = await failure(
      client.photoUri('places/ChIJN1t_tDeuEmsRUsoyG83frY4/photos/AUc7tXW', new AbortController().signal),
    );
    expect(err).toMatchObject({ type: 'ProviderCredentialsRejected' });
    expect(requests[0]?.path).toBe('/v1/places/ChIJN1t_tDeuEmsRUsoyG83frY4/photos/AUc7tXW/media');
  });
});
