import { AllowList, BlockedAddressError, isBlockedAddress, OutboundClient } from '../../lib/outbound';

describe('isBlockedAddress', () => {
  test.each([
    ['10.0.0.1', 'private address'],
    ['172.16.5.4', 'private address'],
    ['192.168.1.1', 'private address'],
    ['127.0.0.1', 'loopback address'],
    ['169.254.169.254', 'link-local address'],
    ['0.0.0.0', 'unspecified address'],
    ['100.64.0.1', 'carrier-grade NAT address'],
    ['224.0.0.1', 'multicast address'],
    ['255.255.255.255', 'broadcast address'],
    ['::1', 'loopback address'],
    ['::', 'unspecified address'],
    ['fe80::1', 'link-local address'],
    ['fc00::1', 'unique local address'],
    ['fd00:ec2::254', 'unique local address'],
    ['::ffff:127.0.0.1', 'loopback address'],
    ['::ffff:a9fe:a9fe', 'link-local address'],
    ['64:ff9b::10.0.0.1', 'private address'],
    ['::10.0.0.1', 'IPv4-compatible IPv6 address'],
    ['::a00:1', 'IPv4-compatible IPv6 address'],
    ['::8.8.8.8', 'IPv4-compatible IPv6 address'],
    ['fe80::1%eth0', 'link-local address'],
    ['not-an-ip', 'not an IP address'],
  ])('%s is refused as a %s', (ip, reason) => {
    expect(isBlockedAddress(ip)).toEqual({ blocked: true, reason });
  });

  test.each(['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::8.8.8.8'])(
    '%s is allowed',
    (ip) => {
      expect(isBlockedAddress(ip)).toEqual({ blocked: false });
    },
  );
});

describe('AllowList (USER_URL_ALLOW_HOSTS, OUTBOUND_ALLOW_HOSTS)', () => {
  test('hostnames match exactly and case-insensitively, whatever they resolve to', () => {
    const list = new AllowList(['LocalHost', 'stand-in.test.']);
    expect(list.allows('localhost', '127.0.0.1')).toBe(true);
    expect(list.allows('LOCALHOST.', '::1')).toBe(true);
    expect(list.allows('stand-in.test', '10.1.2.3')).toBe(true);
    expect(list.allows('api.localhost', '127.0.0.1')).toBe(false);
    expect(list.allows('evil.example', '127.0.0.1')).toBe(false);
  });

  test('an IP entry matches that address only, IPv4-mapped forms included', () => {
    const list = new AllowList(['127.0.0.1', '[::1]']);
    expect(list.allows('x.example', '127.0.0.1')).toBe(true);
    expect(list.allows('x.example', '::ffff:127.0.0.1')).toBe(true);
    expect(list.allows('x.example', '::1')).toBe(true);
    expect(list.allows('x.example', '127.0.0.2')).toBe(false);
    expect(list.allows('10.0.0.1', '10.0.0.1')).toBe(false);
  });

  test('CIDR entries match every address inside them, IPv4 and IPv6', () => {
    const list = new AllowList(['127.0.0.0/8', '10.20.0.0/16', '::1/128', 'fd00:1234::/32']);
    expect(list.allows('h', '127.9.9.9')).toBe(true);
    expect(list.allows('h', '10.20.255.1')).toBe(true);
    expect(list.allows('h', '10.21.0.1')).toBe(false);
    expect(list.allows('h', '::1')).toBe(true);
    expect(list.allows('h', 'fd00:1234:5::1')).toBe(true);
    expect(list.allows('h', 'fd00:1235::1')).toBe(false);
    expect(list.allows('h', '169.254.169.254')).toBe(false);
  });

  test('an empty list allows nothing, and a malformed CIDR fails at start naming the variable', () => {
    expect(new AllowList([]).allows('localhost', '127.0.0.1')).toBe(false);
    expect(() => new AllowList(['10.0.0.0/33'])).toThrow(
      'USER_URL_ALLOW_HOSTS, OUTBOUND_ALLOW_HOSTS): invalid CIDR "10.0.0.0/33"',
    );
  });
});

describe('through a proxy', () => {
  test('a name that resolves to a refused address is refused before anything connects to the proxy', async () => {
    // Port 9 on loopback: nothing listens; a connection attempt would fail as refused, not as blocked.
    const client = new OutboundClient({ allowHosts: [], userAgent: 't', proxyUrl: 'http://127.0.0.1:9' });
    try {
      await expect(client.fetch('http://localhost:8080/')).rejects.toBeInstanceOf(BlockedAddressError);
      await expect(client.fetch('http://10.1.2.3/')).rejects.toThrow('the target of http://10.1.2.3/ is not allowed');
    } finally {
      await client.close();
    }
  });
});
