import { isSameSite, siteKey } from '../../activities/site/urls';
import { projectResult } from '../../jobs';
import { matchKeys } from '../../lib/dedupe';
import { naturalKeyOf } from '../../lib/idap';
import { domainOf } from '../../lib/normalize';

// A company is its registrable domain (Public Suffix List, private suffixes included), not the host.
describe('domainOf: the registrable domain', () => {
  test('subdomains of a company domain under a multi-label public suffix are that domain', () => {
    expect(domainOf('https://shop.acme.co.uk/cart')).toBe('acme.co.uk');
    expect(domainOf('www.acme.co.uk')).toBe('acme.co.uk');
    expect(domainOf('acme.co.uk')).toBe('acme.co.uk');
    expect(domainOf('https://a.b.example.com.au:8443/x')).toBe('example.com.au');
    expect(domainOf('mailto:jane@mail.acme.co.uk')).toBe('acme.co.uk');
    expect(domainOf('https://WWW.Acme.CO.UK./about')).toBe('acme.co.uk');
  });

  test('private suffixes: each github.io or blogspot.com site is its own company', () => {
    expect(domainOf('https://alice.github.io/')).toBe('alice.github.io');
    expect(domainOf('https://www.alice.github.io/')).toBe('alice.github.io');
    expect(domainOf('https://bob.github.io/')).toBe('bob.github.io');
    expect(domainOf('foo.blogspot.com')).toBe('foo.blogspot.com');
  });

  test('internationalised names: unicode and punycode spellings give one key, in punycode', () => {
    expect(domainOf('bücher.de')).toBe('xn--bcher-kva.de');
    expect(domainOf('https://www.xn--bcher-kva.de/')).toBe('xn--bcher-kva.de');
    expect(domainOf('https://shop.пример.рф/')).toBe('xn--e1afmkfd.xn--p1ai');
    expect(domainOf('xn--e1afmkfd.xn--p1ai')).toBe('xn--e1afmkfd.xn--p1ai');
  });

  test('hosts without a registrable domain keep their former keys: IP addresses, a bare public suffix; single labels have none', () => {
    expect(domainOf('http://127.0.0.1:8080/')).toBe('127.0.0.1');
    expect(domainOf('github.io')).toBe('github.io');
    expect(domainOf('http://localhost:3000/')).toBeNull();
    expect(domainOf('not a domain')).toBeNull();
    expect(domainOf('')).toBeNull();
  });
});

describe('keys built on domains', () => {
  test('de-duplication: a website on a subdomain matches the company domain', () => {
    expect(matchKeys({ website: 'https://shop.acme.co.uk/' }).company_domain).toBe('acme.co.uk');
    expect(matchKeys({ company_domain: 'www.acme.co.uk' }).company_domain).toBe('acme.co.uk');
    expect(matchKeys({ website: 'https://alice.github.io' }).company_domain).not.toBe(
      matchKeys({ website: 'https://bob.github.io' }).company_domain,
    );
    expect(matchKeys({ website: 'https://bücher.de' }).exact_hash).toBe(
      matchKeys({ website: 'http://www.xn--bcher-kva.de/' }).exact_hash,
    );
  });

  test('IDAP natural keys: businesses, domains and contacts by registrable domain', () => {
    expect(naturalKeyOf('businesses', { website: 'https://www.acme.co.uk' })).toEqual({ key: 'domain:acme.co.uk' });
    expect(naturalKeyOf('businesses', { domain: 'shop.acme.co.uk' })).toEqual({ key: 'domain:acme.co.uk' });
    expect(naturalKeyOf('domains', { domain: 'shop.acme.co.uk' })).toEqual({ key: 'acme.co.uk' });
    expect(naturalKeyOf('contacts', { full_name: 'Ann Lee', company_domain: 'uk.acme.com' })).toEqual({
      key: 'name:ann lee|acme.com',
    });
  });

  test('e-mail keys: an internationalised domain in either spelling is one address', () => {
    expect(matchKeys({ email: ' Info@Пример.РФ ' }).email).toBe('info@xn--e1afmkfd.xn--p1ai');
    expect(naturalKeyOf('emails', { address: 'info@пример.рф' })).toEqual(
      naturalKeyOf('emails', { address: 'INFO@xn--e1afmkfd.xn--p1ai' }),
    );
    expect(naturalKeyOf('contacts', { email: 'anna@bücher.de' })).toEqual({ key: 'email:anna@xn--bcher-kva.de' });
    expect(matchKeys({ email: 'Ann@Example.COM' }).email).toBe('ann@example.com');
  });
});

describe('crawl scope: the site is the registrable domain and its subdomains', () => {
  const site = (start: string) => new Set([siteKey(new URL(start).hostname)]);

  test('www, shop and the bare domain are one site; another domain under the same suffix is not', () => {
    const acme = site('https://www.acme.co.uk/');
    for (const url of ['https://shop.acme.co.uk/x', 'https://acme.co.uk/', 'http://m.acme.co.uk/'])
      expect(isSameSite(url, acme)).toBe(true);
    for (const url of ['https://other.co.uk/', 'https://co.uk/', 'https://acme.co.uk.evil.test/', 'https://acme.com/'])
      expect(isSameSite(url, acme)).toBe(false);
  });

  test('private suffixes keep sites apart: alice.github.io does not follow bob.github.io', () => {
    expect(isSameSite('https://bob.github.io/', site('https://alice.github.io/'))).toBe(false);
    expect(isSameSite('https://alice.github.io/blog', site('https://alice.github.io/'))).toBe(true);
  });

  test('IP addresses and localhost are sites of their own (the host itself)', () => {
    expect(siteKey('127.0.0.1')).toBe('127.0.0.1');
    expect(isSameSite('http://127.0.0.1:9/x', site('http://127.0.0.1:8080/'))).toBe(true);
    expect(isSameSite('http://127.0.0.2/', site('http://127.0.0.1:8080/'))).toBe(false);
    expect(isSameSite('http://localhost/', site('http://127.0.0.1/'))).toBe(false);
    expect(isSameSite('http://localhost:1/', site('http://localhost:2/'))).toBe(true);
  });
});

describe('crawl results in IDAP', () => {
  test("a crawl of a subdomain projects the company's business and domain; its e-mails on other hosts of the domain relate to it", () => {
    const p = projectResult(
      'crawlSite',
      {
        url: 'https://shop.acme.co.uk/',
        final_url: 'https://shop.acme.co.uk/',
        emails: ['sales@mail.acme.co.uk', 'x@other.co.uk'],
        phones: [],
      },
      { jobId: 'j1' },
    );
    const [business, domain, sales, other] = p.nodes;
    expect(business).toMatchObject({
      type: 'businesses',
      data: { website: 'https://shop.acme.co.uk', domain: 'acme.co.uk' },
    });
    expect(naturalKeyOf('businesses', business?.data ?? {})).toEqual({ key: 'domain:acme.co.uk' });
    expect(domain).toMatchObject({ type: 'domains', data: { domain: 'acme.co.uk' } });
    expect([sales?.data.address, other?.data.address]).toEqual(['sales@mail.acme.co.uk', 'x@other.co.uk']);
    expect(p.edges).toEqual([
      [0, 1],
      [0, 2],
      [1, 2],
      [0, 3],
    ]);
  });

  test('an internationalised site: its e-mails (in Unicode) relate to its domain (in punycode)', () => {
    const p = projectResult(
      'crawlSite',
      {
        url: 'https://пример.рф/',
        final_url: 'https://xn--e1afmkfd.xn--p1ai/',
        emails: ['info@пример.рф'],
        phones: [],
      },
      { jobId: 'j2' },
    );
    expect(p.nodes.map((n) => n.type)).toEqual(['businesses', 'domains', 'emails']);
    expect(p.nodes[1]?.data.domain).toBe('xn--e1afmkfd.xn--p1ai');
    expect(p.edges).toContainEqual([1, 2]);
  });
});
