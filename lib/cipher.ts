import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Credentials at rest: LLM provider keys (spec §4.9: "stored keys are encrypted"), mailbox
 * SMTP/IMAP passwords (spec issue 16) and webhook signing secrets, all under INTEGRATIONS_ENCRYPTION_KEY. AES-256-GCM with a random
 * 96-bit IV per value; the stored text is `v2.<key id>.<base64 iv|tag|ciphertext>`. The key id (the
 * first bytes of the key's SHA-256) says which key sealed a value, so that during a rotation values
 * sealed with a previous key still open and can be re-sealed with the current one.
 *
 * Each value is bound to where it is stored (table, column, client and row id) as GCM associated
 * data: one with database write access cannot move a sealed credential into another row or another
 * client's row (say, a webhook secret into their own webhook's row to read it back, or a victim's
 * LLM key into their integration) and have it open there. `v1.` values, sealed before this, carry no
 * associated data: they still open (as nothing else could be trusted to) until `integrations:reseal`
 * upgrades them to `v2.`; isCurrent is false for them.
 *
 * Duplicate detection (409) compares a keyed fingerprint, HMAC-SHA256 with a key derived (HKDF) from
 * the encryption key: equal credentials give equal fingerprints without ever comparing plaintext, and
 * a database dump alone cannot confirm a guessed key.
 */
/** Where a sealed value lives; it opens only there. */
export interface SealContext {
  table: string;
  column: string;
  clientId: string;
  rowId: string | number;
}

/** The associated data of a v2 value: its place, in a form no two places share (no field holds a newline). */
function associatedData(c: SealContext): Buffer {
  return Buffer.from(`leadjobs-sealed-v2\n${c.table}\n${c.column}\n${c.clientId}\n${String(c.rowId)}`, 'utf8');
}

export class CredentialCipher {
  private readonly current: { id: string; key: Buffer };
  private readonly byId = new Map<string, Buffer>();
  private readonly fingerprintKey: Buffer;

  /** `key` and `previous`: 32 bytes each, base64 (config INTEGRATIONS_ENCRYPTION_KEY / INTEGRATIONS_PREVIOUS_KEYS). */
  constructor(key: string, previous: string[] = []) {
    const main = Buffer.from(key, 'base64');
    if (main.length !== 32) throw new Error('the integrations encryption key must be 32 bytes');
    this.current = { id: keyId(main), key: main };
    for (const k of [key, ...previous]) {
      const raw = Buffer.from(k, 'base64');
      this.byId.set(keyId(raw), raw);
    }
    this.fingerprintKey = Buffer.from(
      hkdfSync('sha256', main, Buffer.alloc(0), 'leadjobs integration credential fingerprint', 32),
    );
  }

  /** The cipher of INTEGRATIONS_ENCRYPTION_KEY (and INTEGRATIONS_PREVIOUS_KEYS), or undefined when no key is set. */
  static fromConfig(config: {
    INTEGRATIONS_ENCRYPTION_KEY?: string | undefined;
    INTEGRATIONS_PREVIOUS_KEYS: string[];
  }): CredentialCipher | undefined {
    return config.INTEGRATIONS_ENCRYPTION_KEY
      ? new CredentialCipher(config.INTEGRATIONS_ENCRYPTION_KEY, config.INTEGRATIONS_PREVIOUS_KEYS)
      : undefined;
  }

  get keyId(): string {
    return this.current.id;
  }

  /** Seals `plaintext` for the one place `context` names. */
  seal(plaintext: string, context: SealContext): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(associatedData(context));
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v2.${this.current.id}.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64')}`;
  }

  /**
   * Opens a value stored at `context`. Throws when no configured key sealed it, when it was damaged,
   * or (v2) when it was sealed for another place.
   */
  open(sealed: string, context: SealContext): string {
    const [version, id, data] = sealed.split('.');
    const key = id === undefined ? undefined : this.byId.get(id);
    if ((version !== 'v1' && version !== 'v2') || !key || data === undefined)
      throw new Error(
        `credential sealed with an unknown key (${id ?? '?'}): set the key it was sealed with in INTEGRATIONS_PREVIOUS_KEYS`,
      );
    const raw = Buffer.from(data, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    if (version === 'v2') decipher.setAAD(associatedData(context));
    decipher.setAuthTag(raw.subarray(12, 28));
    try {
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error(
        `the sealed value of ${context.table} ${String(context.rowId)} does not open: damaged, or sealed for another row or client`,
      );
    }
  }

  /** Whether a sealed value is as seal() writes it now (current key, bound to its place); else reseal it. */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`v2.${this.current.id}.`);
  }

  fingerprint(provider: string, identity: string): string {
    return createHmac('sha256', this.fingerprintKey).update(`${provider}\n${identity}`).digest('hex');
  }
}

const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 8);
