import type { LaunchOptions } from 'playwright-core';

/**
 * Debian's Chromium, launched the way this closed network needs: without background networking
 * (component updates, sync, field trials) Chromium would flood the network with refused
 * connections. Each launch gets a fresh profile (Playwright's default for launch()).
 * WebRTC sends UDP (STUN, media) that neither Playwright's router nor a proxy sees, so a rendered
 * page could reach private addresses with it: only proxied UDP is allowed, and with an HTTP proxy
 * there is none. Debian's headless Chromium (156) obeys `--webrtc-ip-handling-policy`; the
 * `--force-` spelling alone does not stop it there, and is kept for builds that read that one
 * (test/integration/site-webrtc.test.ts sends a page's STUN request to a local UDP listener).
 *
 * Chromium's sandbox stays on (issue 38 item 2): Playwright adds `--no-sandbox` unless
 * `chromiumSandbox` is set, and the pages rendered here are any client's choice, in the worker
 * that holds every secret. Chromium will not sandbox itself as root, so a worker running as root
 * points CHROMIUM_PATH at dev/chromium-sandboxed, which drops to an unprivileged user with an empty
 * environment first (test/integration/browser-sandbox.test.ts reads the renderers' /proc entries).
 */
export function launchOptions(executablePath: string): LaunchOptions {
  return {
    executablePath,
    headless: true,
    chromiumSandbox: true,
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
      '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
      '--webrtc-ip-handling-policy=disable_non_proxied_udp',
    ],
  };
}
