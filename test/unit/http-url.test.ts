import { webhookCreateBody } from '../../api/schemas/webhooks';
import { crawlSitePayload } from '../../jobs/crawl-site';
import { hasCredentials, httpUrl, isHttpUrl } from '../../jobs/fields';

// The one reading of "an http(s) URL" that job payloads, webhooks and blog content share.
test.each([
  ['https://example.com/a?b=c#d', true],
  ['HTTP://Example.COM', true],
  ['http://127.0.0.1:8080/', true],
  ['https://bücher.de/', true],
  ['ftp://example.com/', false],
  ['javascript:alert(1)', false],
  ['mailto:a@example.com', false],
  ['https://', false],
  ['example.com', false],
  ['', false],
])('isHttpUrl(%j) is %s', (url, expected) => {
  expect(isHttpUrl(url)).toBe(expected);
});

test.each([
  ['http://user:pass@example.com/', true],
  ['http://user@example.com/', true],
  ['http://example.com/@user', false],
  ['not a url', false],
])('hasCredentials(%j) is %s', (url, expected) => {
  expect(hasCredentials(url)).toBe(expected);
});

test('a job payload URL names its field in each refusal', () => {
  const url = httpUrl('url');
  expect(url.safeParse('  https://example.com/  ').data).toBe('https://example.com/');
  expect(url.safeParse('ftp://example.com/').error?.issues.map((i) => i.message)).toEqual([
    'url must be a valid http(s) URL',
  ]);
  expect(url.safeParse('https://a:b@example.com/').error?.issues.map((i) => i.message)).toEqual([
    'url must not contain credentials (user:password@ before the host)',
  ]);
});

test('a crawl starts at a URL of at most 2,048 characters, the longest it would follow', () => {
  const at = `https://example.com/${'a'.repeat(2048 - 20)}`;
  expect(at.length).toBe(2048);
  expect(crawlSitePayload.safeParse({ url: at }).success).toBe(true);
  expect(crawlSitePayload.safeParse({ url: `${at}b` }).error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual(
    [['url', 'url must be at most 2048 characters long (a crawl follows no longer URL)']],
  );
});

test('a webhook URL with credentials is refused with the webhook message', () => {
  const parsed = webhookCreateBody.safeParse({
    url: 'https://user:secret@hooks.example.com/x',
    events: ['job.completed'],
  });
  expect(parsed.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
    ['url', 'must be an http:// or https:// URL without credentials'],
  ]);
});
