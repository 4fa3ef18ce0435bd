import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, parseConfig } from '../../lib/config';
import { temporalConnectionOptions } from '../../lib/temporal';

// The one secret parseConfig requires besides the variables under test.
const base = { MINIO_ACCESS_KEY: 'k', MINIO_SECRET_KEY: 's' };
const CERT = '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nkey\n-----END PRIVATE KEY-----\n';
const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';

let dir: string;
let files: { cert: string; key: string; ca: string; notPem: string };
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'temporal-tls-'));
  files = {
    cert: path.join(dir, 'client.pem'),
    key: path.join(dir, 'client.key'),
    ca: path.join(dir, 'ca.pem'),
    notPem: path.join(dir, 'notes.txt'),
  };
  writeFileSync(files.cert, CERT);
  writeFileSync(files.key, KEY);
  writeFileSync(files.ca, CA);
  writeFileSync(files.notPem, 'not a certificate');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function configError(env: Record<string, string>): string {
  try {
    temporalConnectionOptions(parseConfig({ ...base, ...env }));
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a configuration error');
}

describe('Temporal connection config', () => {
  test('defaults: plain connection to the local dev server, no TLS, no API key', () => {
    const config = parseConfig(base);
    expect(config.TEMPORAL_TLS).toBe(false);
    expect(temporalConnectionOptions(config)).toEqual({ address: '127.0.0.1:7233' });
  });

  test('TEMPORAL_TLS=true alone: TLS with the system CAs and no client certificate', () => {
    const options = temporalConnectionOptions(
      parseConfig({ ...base, TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_TLS: 'true' }),
    );
    expect(options).toEqual({ address: 'temporal.internal:7233', tls: {} });
  });

  test('mTLS: the certificate, key and CA files are read at start and passed with the server name', () => {
    const config = parseConfig({
      ...base,
      TEMPORAL_ADDRESS: '10.0.0.5:7233',
      TEMPORAL_TLS_CERT_PATH: files.cert,
      TEMPORAL_TLS_KEY_PATH: files.key,
      TEMPORAL_TLS_CA_PATH: files.ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    // The file settings turn TLS on without TEMPORAL_TLS.
    expect(config.TEMPORAL_TLS).toBe(true);
    const options = temporalConnectionOptions(config);
    expect(options.address).toBe('10.0.0.5:7233');
    expect(options.apiKey).toBeUndefined();
    expect(Buffer.from(options.tls?.clientCertPair?.crt ?? []).toString()).toBe(CERT);
    expect(Buffer.from(options.tls?.clientCertPair?.key ?? []).toString()).toBe(KEY);
    expect(Buffer.from(options.tls?.serverRootCACertificate ?? []).toString()).toBe(CA);
    expect(options.tls?.serverNameOverride).toBe('temporal.internal');
  });

  test('Temporal Cloud API key: sent as apiKey and implies TLS', () => {
    const config = parseConfig({
      ...base,
      TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
      TEMPORAL_NAMESPACE: 'leadjobs.a1b2c',
      TEMPORAL_API_KEY: 'cloud-key',
    });
    expect(config.TEMPORAL_TLS).toBe(true);
    expect(temporalConnectionOptions(config)).toEqual({
      address: 'us-east-1.aws.api.temporal.io:7233',
      tls: {},
      apiKey: 'cloud-key',
    });
  });

  test('a client certificate without its key (and the reverse) fails naming both variables', () => {
    const noKey = configError({ TEMPORAL_TLS_CERT_PATH: files.cert });
    expect(noKey).toContain('TEMPORAL_TLS_KEY_PATH');
    expect(noKey).toContain('TEMPORAL_TLS_CERT_PATH');
    const noCert = configError({ TEMPORAL_TLS_KEY_PATH: files.key });
    expect(noCert).toMatch(/TEMPORAL_TLS_CERT_PATH: required when TEMPORAL_TLS_KEY_PATH is set/);
  });

  test('an API key with TEMPORAL_TLS=false fails: the key is only sent over TLS', () => {
    expect(configError({ TEMPORAL_TLS: 'false', TEMPORAL_API_KEY: 'cloud-key' })).toMatch(
      /TEMPORAL_TLS: must not be false when TEMPORAL_API_KEY is set/,
    );
    expect(configError({ TEMPORAL_TLS: 'false', TEMPORAL_TLS_CA_PATH: files.ca })).toMatch(
      /TEMPORAL_TLS: is false but TEMPORAL_TLS_CA_PATH is set/,
    );
  });

  test('a bad TEMPORAL_TLS value fails naming the variable', () => {
    expect(configError({ TEMPORAL_TLS: 'maybe' })).toMatch(/^invalid configuration:\n {2}TEMPORAL_TLS: /);
  });

  test('a missing or non-PEM file fails at start naming the variable and the file', () => {
    const missing = path.join(dir, 'absent.pem');
    expect(configError({ TEMPORAL_TLS_CERT_PATH: missing, TEMPORAL_TLS_KEY_PATH: files.key })).toMatch(
      new RegExp(`TEMPORAL_TLS_CERT_PATH: ENOENT.*${missing.replace(/[.]/g, '\\.')}`),
    );
    expect(configError({ TEMPORAL_TLS_CA_PATH: files.notPem })).toBe(
      `invalid configuration:\n  TEMPORAL_TLS_CA_PATH: ${files.notPem} is not a PEM file`,
    );
  });

  test('empty variables mean unset, as elsewhere in the config', () => {
    const config = parseConfig({ ...base, TEMPORAL_TLS: '', TEMPORAL_API_KEY: '', TEMPORAL_TLS_CERT_PATH: '' });
    expect(temporalConnectionOptions(config)).toEqual({ address: '127.0.0.1:7233' });
  });
});
