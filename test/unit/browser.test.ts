import { launchOptions } from '../../lib/browser';

test('Chromium is launched with WebRTC limited to proxied UDP, so a rendered page cannot reach addresses over UDP', () => {
  expect(launchOptions('/usr/bin/chromium').args).toEqual(
    expect.arrayContaining([
      '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    ]),
  );
});
