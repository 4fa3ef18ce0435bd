import type { LaunchOptions } from 'playwright-core';

/**
 * Debian's Chromium, launched the way this closed network needs: without background networking
 * (component updates, sync, field trials) Chromium would flood the network with refused
 * connections. Each launch gets a fresh profile (Playwright's default for launch()).
 */
export function launchOptions(executablePath: string): LaunchOptions {
  return {
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  };
}
