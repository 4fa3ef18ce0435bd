import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import { BrowserPageSource } from '../../activities/site/fetch';
import { OutboundClient } from '../../lib/outbound';
import { listenLocal } from '../stand-ins/listen';

// render_js: WebRTC is UDP that Playwright's router never sees; Chromium must not send it at all.
test('a rendered page that opens an RTCPeerConnection to a STUN server on 127.0.0.1 sends it nothing', async () => {
  let datagrams = 0;
  const udp = createSocket('udp4').on('message', () => datagrams++);
  await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const html = `<!doctype html><title>rtc</title><script>
    const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${udp.address().port}' }] });
    pc.createDataChannel('probe');
    pc.createOffer().then((offer) => pc.setLocalDescription(offer)).then(() => { document.title = 'offered'; });
  </script>`;
  const web = await listenLocal(
    createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(html)),
  );
  const outbound = new OutboundClient({ allowHosts: ['127.0.0.1'], userAgent: 'test' });
  const source = new BrowserPageSource(outbound, process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', {
    userAgent: 'test',
    pageTimeoutMs: 9000,
    maxPageBytes: 100_000,
  });
  try {
    const page = await source.fetchPage(`${web.baseUrl}/`, new AbortController().signal);
    // The page did gather ICE candidates (its offer is set), for 3 s of network idle wait.
    expect(page.html).toContain('<title>offered</title>');
    expect(datagrams).toBe(0);
  } finally {
    await Promise.all([source.close().then(() => outbound.close()), web.close()]);
    udp.close();
  }
});
