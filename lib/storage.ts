import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import * as Minio from 'minio';
import type { Config } from './config';
import { markDependency } from './outages';

/** S3's smallest multipart part. */
const STREAM_PART_SIZE = 5 * 1024 * 1024;

/**
 * Uploads in flight live under this prefix of the results bucket until they are accepted (copied
 * to the client's bucket) or refused (removed). One an API crash leaves behind expires after
 * STAGING_EXPIRY_DAYS by the bucket's lifecycle rule.
 */
export const STAGING_PREFIX = 'media-staging/';
const STAGING_EXPIRY_DAYS = 1;
const STAGING_RULE_ID = 'leadjobs-expire-staging';

export interface StoredObject {
  bucket: string;
  key: string;
  size: number;
  contentType: string;
  /** sha256 of the bytes, hex. */
  contentHash: string;
  url: string;
}

/**
 * Object storage on MinIO (S3 API). Each client has its own media bucket, publicly readable,
 * so hosted URLs are `{MEDIA_PUBLIC_URL}/{bucket}/{key}` (spec §2.5).
 */
export class Storage {
  private readonly ensured = new Set<string>();

  constructor(
    readonly minio: Minio.Client,
    private readonly bucketPrefix: string,
    private readonly publicUrl: string,
    private readonly region: string,
  ) {}

  static fromConfig(config: Config): Storage {
    const endpoint = new URL(config.MINIO_ENDPOINT);
    const useSSL = endpoint.protocol === 'https:';
    const client = new Minio.Client({
      endPoint: endpoint.hostname,
      port: endpoint.port ? Number(endpoint.port) : useSSL ? 443 : 80,
      useSSL,
      accessKey: config.MINIO_ACCESS_KEY,
      secretKey: config.MINIO_SECRET_KEY,
      region: config.MINIO_REGION,
      // Streams of unknown length (media uploads) go up in parts of this size, one part in memory at
      // a time; the client's default (64 MiB) would hold a whole 25 MB upload in memory.
      partSize: STREAM_PART_SIZE,
    });
    return new Storage(client, config.MINIO_BUCKET_PREFIX, config.MEDIA_PUBLIC_URL, config.MINIO_REGION);
  }

  /** `cli_ab12` -> `<prefix>-cli-ab12` (bucket names allow only [a-z0-9.-]). */
  bucketFor(clientId: string): string {
    return `${this.bucketPrefix}-${clientId.toLowerCase().replace(/[^a-z0-9-]/g, '-')}`.slice(0, 63);
  }

  urlFor(bucket: string, key: string): string {
    return `${this.publicUrl}/${bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
  }

  /** The private bucket for large job results (never publicly readable). */
  get resultsBucket(): string {
    return `${this.bucketPrefix}-results`;
  }

  /** Creates the bucket (with an anonymous read-only policy when public), once per process. */
  async ensureBucket(bucket: string, publicRead = true): Promise<void> {
    if (this.ensured.has(bucket)) return;
    if (!(await s3(() => this.minio.bucketExists(bucket)))) {
      try {
        await s3(() => this.minio.makeBucket(bucket, this.region));
      } catch (err) {
        // Another worker may have created it between the check and here.
        if ((err as { code?: string }).code !== 'BucketAlreadyOwnedByYou') throw err;
      }
      if (publicRead) await s3(() => this.minio.setBucketPolicy(bucket, JSON.stringify(readOnlyPolicy(bucket))));
    }
    this.ensured.add(bucket);
  }

  /**
   * Stores a public media object in the client's bucket. `headers` are those MinIO stores with the
   * object and sends back on every GET (Content-Disposition, Cache-Control, Content-Language,
   * Expires); any other name is kept as x-amz-meta-* metadata, which no browser reads (measured on
   * the MinIO of dev/: a Content-Security-Policy set here comes back as x-amz-meta-content-security-policy).
   */
  put(
    clientId: string,
    key: string,
    body: Buffer | string,
    contentType: string,
    headers: Record<string, string> = {},
  ): Promise<StoredObject> {
    return this.putIn(this.bucketFor(clientId), key, body, contentType, true, headers);
  }

  /** Stores a private object (job results) in the results bucket. */
  putPrivate(key: string, body: Buffer | string, contentType: string): Promise<StoredObject> {
    return this.putIn(this.resultsBucket, key, body, contentType, false);
  }

  private async putIn(
    bucket: string,
    key: string,
    body: Buffer | string,
    contentType: string,
    publicRead: boolean,
    headers: Record<string, string> = {},
  ): Promise<StoredObject> {
    await this.ensureBucket(bucket, publicRead);
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
    await s3(() => this.minio.putObject(bucket, key, bytes, bytes.length, { ...headers, 'Content-Type': contentType }));
    return {
      bucket,
      key,
      size: bytes.length,
      contentType,
      contentHash: createHash('sha256').update(bytes).digest('hex'),
      url: this.urlFor(bucket, key),
    };
  }

  get(bucket: string, key: string): Promise<Buffer> {
    return s3(async () => {
      const stream = await this.minio.getObject(bucket, key);
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks);
    });
  }

  /**
   * Streams `body` (of unknown length) into a private object of the results bucket, in parts of 5 MiB.
   * End `body` to finish; the caller removes the object when it is not wanted after all.
   */
  async putPrivateStream(key: string, body: Readable, headers: Record<string, string>): Promise<void> {
    await this.ensureBucket(this.resultsBucket, false);
    await this.ensureStagingExpiry();
    // MinIO's upload of an unknown length is multipart, and a body that ends before its first byte
    // would complete one of no part, which S3 refuses ("You must specify at least one part"): an
    // empty body is stored as the empty object it is.
    const chunks = body[Symbol.asyncIterator]();
    const first = await chunks.next();
    if (first.done) {
      await s3(() => this.minio.putObject(this.resultsBucket, key, Buffer.alloc(0), 0, headers));
      return;
    }
    const rest: AsyncIterable<Buffer> = { [Symbol.asyncIterator]: () => chunks };
    const whole = Readable.from(
      (async function* () {
        yield first.value as Buffer;
        yield* rest;
      })(),
      { objectMode: false },
    );
    await s3(() => this.minio.putObject(this.resultsBucket, key, whole, undefined, headers));
  }

  private stagingExpiry?: Promise<void>;

  /**
   * Adds the staging expiry rule to the results bucket's lifecycle (once per process; rules an
   * operator set there are kept).
   */
  private ensureStagingExpiry(): Promise<void> {
    this.stagingExpiry ??= (async () => {
      const bucket = this.resultsBucket;
      const current = await this.minio.getBucketLifecycle(bucket).catch((err: unknown) => {
        if ((err as { code?: string }).code === 'NoSuchLifecycleConfiguration') return null;
        throw err;
      });
      // The client's XML parser gives a lone rule as an object, several as an array.
      const rules = [current?.Rule ?? []].flat();
      if (rules.some((r) => r.ID === STAGING_RULE_ID)) return;
      await this.minio.setBucketLifecycle(bucket, {
        Rule: [
          ...rules,
          {
            ID: STAGING_RULE_ID,
            Status: 'Enabled',
            Filter: { Prefix: STAGING_PREFIX },
            Expiration: { Days: STAGING_EXPIRY_DAYS },
          },
        ],
      });
    })().catch((err: unknown) => {
      // Never a reason to refuse the upload itself. Keys without the lifecycle permission: no rule
      // (README says so); anything else (storage busy or down): the next upload tries again.
      if ((err as { code?: string }).code !== 'AccessDenied') this.stagingExpiry = undefined;
    });
    return this.stagingExpiry;
  }

  /** Server-side copy of a private object into the client's public bucket (metadata kept). */
  async copyPrivateToClient(
    clientId: string,
    fromKey: string,
    toKey: string,
  ): Promise<{ bucket: string; key: string; url: string }> {
    const bucket = this.bucketFor(clientId);
    await this.ensureBucket(bucket, true);
    await s3(() =>
      this.minio.copyObject(bucket, toKey, `/${this.resultsBucket}/${fromKey}`, new Minio.CopyConditions()),
    );
    return { bucket, key: toKey, url: this.urlFor(bucket, toKey) };
  }

  /**
   * Removes an object; a missing one is not an error, nor is a missing bucket (a job cancelled
   * before anything was ever stored: its results bucket is made with the first result).
   */
  async remove(bucket: string, key: string): Promise<void> {
    await s3(() =>
      this.minio.removeObject(bucket, key).catch((err: unknown) => {
        if ((err as { code?: string }).code !== 'NoSuchBucket') throw err;
      }),
    );
  }

  /** The object's bytes from `offset`, `length` of them (all the rest when omitted), as a stream. */
  async stream(bucket: string, key: string, offset = 0, length?: number): Promise<Readable> {
    return s3(() =>
      offset === 0 && length === undefined
        ? this.minio.getObject(bucket, key)
        : this.minio.getPartialObject(bucket, key, offset, length),
    );
  }

  /** The whole object as a stream, or null when it (or its bucket) does not exist. */
  async streamIfExists(bucket: string, key: string): Promise<Readable | null> {
    return s3(() =>
      this.minio.getObject(bucket, key).catch((err: unknown) => {
        const code = (err as { code?: string }).code;
        if (code === 'NoSuchKey' || code === 'NoSuchBucket') return null;
        throw err;
      }),
    );
  }

  /** Health probe: any authenticated call proves the server and the keys work. */
  async ping(): Promise<void> {
    await s3(() => this.minio.listBuckets());
  }
}

/** A MinIO call whose failure is marked as object storage's (a refused connection reads as 503 storage, not database). */
async function s3<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw markDependency(err, 'storage');
  }
}

function readOnlyPolicy(bucket: string) {
  return {
    Version: '2012-10-17',
    Statement: [
      { Effect: 'Allow', Principal: { AWS: ['*'] }, Action: ['s3:GetObject'], Resource: [`arn:aws:s3:::${bucket}/*`] },
    ],
  };
}
