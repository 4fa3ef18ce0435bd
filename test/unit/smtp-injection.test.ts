import { createServer, type AddressInfo, type Server } from 'node:net';
import { crawlVerifyPayload } from '../../jobs/crawl-verify';
import { parseAddress } from '../../activities/verify/address';
import { probeMailbox } from '../../activities/verify/smtp';
import { dedupeRecord } from '../../api/schemas/dedupe';
import { naturalKeyOf } from '../../lib/idap';

// Issue 38 item 3: SMTP command injection through crawlVerify. Payload corpus: CR/LF command
// injection in the forms OWASP's Web Security Testing Guide describes for mail injection
// (WSTG-INPV-11: CRLF then RCPT/DATA/QUIT), written out here, as quoted local parts, which
// validator's isEmail accepts, plus the other control characters it lets through (bare CR, bare
// LF, TAB, VT, DEL, NEL, the Unicode line separator).
const INJECTIONS = [
  '"x\r\nRCPT TO:<victim@target.example>\r\nDATA\r\nSubject: hi\r\n\r\nspam\r\n.\r\nQUIT\r\n"@example.com',
  '"x\nDATA\n"@example.com',
  '"x\rRSET\r"@example.com',
  '"x\r\nMAIL FROM:<ceo@bank.example>"@example.com',
  '"a\tb"@example.com',
  '"a\u000bb"@example.com',
  '"a\u007fb"@example.com',
  '"a\u0085b"@example.com',
  '"a\u2028b"@example.com',
];

describe('addresses with control characters are refused wherever an address is accepted', () => {
  test.each(INJECTIONS.map((a) => [JSON.stringify(a), a]))('%s', (_name, address) => {
    // crawlVerify's payload: a 422 naming the field.
    const payload = crawlVerifyPayload.safeParse({ emails: ['ok@example.com', address] });
    expect(payload.success).toBe(false);
    expect(payload.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['emails.1', expect.stringContaining('control characters')],
    ]);
    expect(crawlVerifyPayload.safeParse({ email: address }).success).toBe(false);
    // An address that reaches the activity another way (a crawled page in the lead pipeline).
    expect(parseAddress(address)).toMatchObject({ error: expect.stringContaining('control character') });
    // De-duplication records and IDAP email resources.
    expect(dedupeRecord.safeParse({ email: address }).success).toBe(false);
    expect(naturalKeyOf('emails', { address })).toMatchObject({
      field: 'address',
      error: expect.stringContaining('control characters'),
    });
  });

  test('plain and quoted addresses without controls still pass', () => {
    expect(crawlVerifyPayload.safeParse({ emails: ['info@example.com', '"john smith"@example.com'] }).success).toBe(
      true,
    );
    expect(parseAddress('"john smith"@example.com')).toMatchObject({ ascii: '"john smith"@example.com' });
    expect(dedupeRecord.safeParse({ email: 'info@example.com' }).success).toBe(true);
  });
});

describe('the SMTP probe never writes a line holding CR or LF', () => {
  let server: Server;
  let port: number;
  const received: string[] = [];

  beforeAll(async () => {
    // A bare mail server that says yes to everything and records each line it is sent.
    server = createServer((socket) => {
      let buffer = '';
      socket.write('220 mx.test ESMTP\r\n');
      socket.on('data', (chunk) => {
        buffer += chunk.toString('latin1');
        for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
          const line = buffer.slice(0, nl).replace(/\r$/, '');
          buffer = buffer.slice(nl + 1);
          received.push(line);
          const verb = line.split(/[ :]/)[0]?.toUpperCase();
          socket.write(verb === 'DATA' ? '354 go ahead\r\n' : verb === 'QUIT' ? '221 bye\r\n' : '250 ok\r\n');
        }
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('an injected RCPT TO is refused before anything of it is sent; the server sees no DATA', async () => {
    received.length = 0;
    const probe = probeMailbox({
      address: '127.0.0.1',
      host: 'mx.test',
      port,
      helo: 'probe.test',
      from: 'verify@probe.test',
      rcpt: INJECTIONS[0] ?? '',
      randomRcpt: 'zz-random@example.com',
      commandTimeoutMs: 5000,
      deadline: Date.now() + 10_000,
    });
    await expect(probe).rejects.toMatchObject({ kind: 'blocked', message: expect.stringContaining('CR or LF') });
    expect(received.filter((l) => /^(DATA|RCPT|RSET)\b/i.test(l) || l.startsWith('Subject'))).toEqual([]);
    expect(received).toContain('MAIL FROM:<verify@probe.test>');
  });
});
