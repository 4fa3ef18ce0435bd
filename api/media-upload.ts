import { createHash, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Writable } from 'node:stream';
import formidable, { errors as formidableErrors } from 'formidable';
import { STAGING_PREFIX, type Storage } from '../lib/storage';
import { AppError, ValidationError } from '../lib/errors';
import {
  correctFilename,
  FORMAT_INFO,
  IMAGE_FORMATS,
  SNIFF_BYTES,
  sniff,
  type ImageFormat,
  type Sniffed,
} from '../lib/media/formats';
import { InvalidNameError, normalizeFilename, normalizeFolder, objectKey, withSuffix } from '../lib/media/names';
import { InvalidSvgError } from '../lib/media/svg';
import { SvgSanitizer, SvgTimeoutError } from '../lib/media/svg-worker';
import type { MediaFileRow, MediaRepository } from '../db/repositories/media';
import { idapRef } from '../lib/idap';

/**
 * Media uploads (spec §4.8): a multipart/form-data body with `file` and an optional `folder`,
 * streamed into MinIO so that memory holds one 5 MiB part at most, whatever the file's size.
 *
 * The file streams into a private staging object as it arrives (the `folder` field may come after
 * it in the body), its format recognised from the leading bytes before anything is written; when
 * the whole body has been read and is acceptable, the staging object is copied (server-side) to
 * its key in the client's public bucket and removed. Too large, not an image, or a malformed body:
 * the staging object is removed and nothing is stored. SVG images are parsed and sanitised, so
 * they are collected in memory (up to MEDIA_MAX_SVG_BYTES) instead.
 */

export type UploadKind = 'image' | 'file';

export interface UploadLimits {
  maxBytes: number;
  maxSvgBytes: number;
  /** Deadline of one SVG's sanitising (in a worker thread); past it 413. */
  svgTimeoutMs: number;
}

/** Every field of spec §4.8's response, plus the IDAP reference of the stored file. */
export interface UploadResult {
  success: true;
  file_id: string;
  idap_ref: string;
  bucket: string;
  key: string;
  url: string;
  size: number;
  content_type: string;
  detected_format: ImageFormat | null;
  original_filename: string | null;
  corrected_filename: string;
  format_corrected: boolean;
}

/** Uploads live under this prefix of the client's bucket, apart from what jobs store there (maps/, landings/, ...). */
export const MEDIA_KEY_PREFIX = 'media';

const MIB = 1024 * 1024;
const megabytes = (n: number) => (n >= MIB ? `${Math.round((n / MIB) * 10) / 10} MB` : `${Math.round(n / 1024)} KB`);
/** Room for the multipart framing and the small `folder` field around the file. */
const ENVELOPE_BYTES = 64 * 1024;

export const INVALID_IMAGE = 'Invalid image format';
const SUPPORTED = IMAGE_FORMATS.map((f) => f.toUpperCase()).join(', ');

const tooLarge = (limits: UploadLimits, what = 'the file') =>
  new AppError(
    413,
    `${what} is larger than the upload limit of ${megabytes(limits.maxBytes)} (${limits.maxBytes} bytes, MEDIA_MAX_UPLOAD_BYTES); nothing was stored`,
    'File too large',
    { Connection: 'close' },
  );

/** What the leading bytes decided for the stream that follows. */
type Plan =
  | { mode: 'stage'; contentType: string; format: ImageFormat | null; sniffed: Sniffed }
  | { mode: 'svg'; sniffed: Sniffed }
  | { mode: 'discard'; reason: AppError | ValidationError };

/**
 * The file part's destination: holds the first SNIFF_BYTES, asks `decide` what to do, then streams
 * into the staging object (hashing and counting), collects an SVG, or discards the rest.
 */
class UploadSink extends Writable {
  private head: Buffer[] = [];
  private headBytes = 0;
  plan: Plan | undefined;
  size = 0;
  private readonly hash = createHash('sha256');
  private pass: PassThrough | undefined;
  private upload: Promise<void> | undefined;
  staged = false;
  svg: Buffer[] = [];
  svgTooLarge = false;

  constructor(
    private readonly decide: (head: Buffer) => Promise<Plan>,
    private readonly stage: (body: PassThrough, contentType: string) => Promise<void>,
    private readonly maxSvgBytes: number,
  ) {
    super();
  }

  /** Resolves once the staging upload (if any) has finished or failed. */
  async settled(): Promise<void> {
    await this.upload?.catch(() => undefined);
  }

  /** Throws the staging upload's error (a small body may be wholly read before the upload fails). */
  async stagingDone(): Promise<void> {
    await this.upload;
  }

  get sha256(): string {
    return this.hash.digest('hex');
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.size += chunk.length;
    if (this.plan) return this.feed(chunk, cb);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes < SNIFF_BYTES) return cb();
    this.begin().then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    (async () => {
      if (!this.plan) await this.begin();
      this.pass?.end();
      await this.upload;
    })().then(() => cb(), cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    // Ending (not destroying) the staging stream lets the MinIO upload settle; the caller removes it.
    this.pass?.end();
    cb(err);
  }

  private async begin(): Promise<void> {
    const head = Buffer.concat(this.head);
    this.head = [];
    this.plan = await this.decide(head);
    // Destroyed meanwhile (the body failed): start nothing that would wait for an end.
    if (this.destroyed) return;
    if (this.plan.mode === 'stage') {
      this.pass = new PassThrough();
      this.staged = true;
      this.upload = this.stage(this.pass, this.plan.contentType);
      // A failed upload stops the body: formidable sees the error and the request fails.
      this.upload.catch((err: Error) => this.destroy(err));
    }
    await new Promise<void>((resolve, reject) => this.feed(head, (err) => (err ? reject(err) : resolve())));
  }

  private feed(chunk: Buffer, cb: (err?: Error | null) => void): void {
    const plan = this.plan;
    if (!plan || plan.mode === 'discard' || chunk.length === 0 || this.destroyed) return cb();
    this.hash.update(chunk);
    if (plan.mode === 'svg') {
      if (this.size > this.maxSvgBytes) {
        this.svgTooLarge = true;
        this.svg = [];
      } else {
        this.svg.push(chunk);
      }
      return cb();
    }
    const pass = this.pass as PassThrough;
    if (pass.write(chunk)) return cb();
    pass.once('drain', () => cb());
  }
}

const MEDIA_TYPE_ESSENCE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/;
// RFC 9110 parameter: token=token or token="quoted" (no control characters: the value is served as a header).
// eslint-disable-next-line no-control-regex -- the class excludes control characters, it does not match them
const MEDIA_TYPE_PARAMETER = /^([a-z0-9!#$%&'*+.^_`|~-]+)=([a-z0-9!#$%&'*+.^_`|~-]+|"[^"\\\u0000-\u001f\u007f]*")$/i;

/**
 * A declared part type that is a valid media type, kept with its parameters (`text/html;
 * charset=utf-8`); one with a malformed parameter keeps its type/subtype alone; anything else is
 * octet-stream.
 */
export function declaredType(mimetype: string | null | undefined): string {
  const [first = '', ...params] = (mimetype ?? '').split(';').map((p) => p.trim());
  const essence = first.toLowerCase();
  if (!MEDIA_TYPE_ESSENCE.test(essence)) return 'application/octet-stream';
  // Names are case-insensitive (lower-cased); values are kept as given (a boundary is case-sensitive).
  const given = params.filter((p) => p !== '').map((p) => MEDIA_TYPE_PARAMETER.exec(p));
  if (!given.every((m) => m !== null)) return essence;
  return [essence, ...given.map((m) => `${(m[1] as string).toLowerCase()}=${m[2] as string}`)].join('; ');
}

/** RFC 6266 attachment disposition with an ASCII fallback and the UTF-8 name. */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export class MediaUploads {
  constructor(
    private readonly storage: Storage,
    private readonly repo: MediaRepository,
    private readonly limits: UploadLimits,
  ) {
    this.svgSanitizer = new SvgSanitizer(limits.svgTimeoutMs);
  }

  private readonly svgSanitizer: SvgSanitizer;

  /** Reads the multipart body of `req` and stores its `file` for `clientId`. */
  async upload(req: IncomingMessage, clientId: string, kind: UploadKind): Promise<UploadResult> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
    if (type !== 'multipart/form-data') {
      throw new AppError(
        415,
        `send the file as multipart/form-data with a 'file' field (and optionally 'folder'); got '${type || 'no content type'}'`,
        'Unsupported media type',
      );
    }
    // A body announced as too large is refused before a byte of it is read.
    const announced = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(announced) && announced > this.limits.maxBytes + ENVELOPE_BYTES)
      throw tooLarge(this.limits, 'the request body');

    const fileId = randomUUID();
    const stagingKey = `${STAGING_PREFIX}${fileId}`;
    const fieldOf = new WeakMap<object, string>();
    let sink: UploadSink | undefined;
    let filename: string | null = null;

    const decide = async (head: Buffer, declared: string | null | undefined): Promise<Plan> => {
      const sniffed = await sniff(head);
      if (kind === 'file') {
        return {
          mode: 'stage',
          contentType: declaredType(declared),
          format: sniffed.format === 'svg-candidate' ? null : sniffed.format,
          sniffed,
        };
      }
      if (sniffed.format === 'svg-candidate') return { mode: 'svg', sniffed };
      if (sniffed.format === null) {
        const what =
          head.length === 0
            ? 'the file is empty'
            : sniffed.mime
              ? `the content is ${sniffed.mime}`
              : 'the content is not a recognised image';
        return {
          mode: 'discard',
          reason: new AppError(
            400,
            `${what}, detected from its leading bytes; supported formats: ${SUPPORTED}`,
            INVALID_IMAGE,
          ),
        };
      }
      return { mode: 'stage', contentType: FORMAT_INFO[sniffed.format].contentType, format: sniffed.format, sniffed };
    };

    const form = formidable({
      maxFiles: 1,
      maxFields: 10,
      maxFieldsSize: 64 * 1024,
      maxFileSize: this.limits.maxBytes,
      maxTotalFileSize: this.limits.maxBytes,
      allowEmptyFiles: true,
      minFileSize: 0,
      fileWriteStreamHandler: (file) => {
        const part = file as unknown as { originalFilename?: string | null; mimetype?: string | null };
        const field = file ? fieldOf.get(file) : undefined;
        if (field !== 'file' || sink) {
          // A file part under another name is read and dropped; without a `file` part the answer is 422.
          return new Writable({ write: (_c, _e, cb) => cb() });
        }
        filename = part.originalFilename ?? null;
        const stored = normalizeFilename(filename, kind === 'image' ? 'image' : 'file');
        sink = new UploadSink(
          (head) => decide(head, part.mimetype),
          async (body, contentType) => {
            const headers: Record<string, string> = { 'Content-Type': contentType };
            if (kind === 'file') headers['Content-Disposition'] = attachmentDisposition(stored);
            await this.storage.putPrivateStream(stagingKey, body, headers);
          },
          this.limits.maxSvgBytes,
        );
        return sink;
      },
    });
    form.on('fileBegin', (name, file) => fieldOf.set(file, name));

    try {
      let fields: formidable.Fields;
      try {
        [fields] = await form.parse(req);
      } catch (err) {
        throw this.mapFormError(err);
      }
      const folderValues = (fields.folder ?? []) as string[];
      const extra = Object.keys(fields).filter((f) => f !== 'folder');
      const issues = [
        ...(sink
          ? []
          : [
              {
                type: 'missing',
                loc: ['body', 'file'],
                msg: "Field required: the upload as a multipart file part named 'file'",
              },
            ]),
        ...extra.map((f) => ({
          type: 'extra_forbidden',
          loc: ['body', f],
          msg: "Extra inputs are not permitted (fields: 'file', 'folder')",
        })),
        ...(folderValues.length > 1 ? [{ type: 'too_many', loc: ['body', 'folder'], msg: 'give folder once' }] : []),
      ];
      if (issues.length > 0) throw new ValidationError(issues);
      const s = sink as unknown as UploadSink;
      const plan = s.plan as Plan;
      if (plan.mode === 'discard') throw plan.reason;

      let folder: string;
      try {
        folder = normalizeFolder(folderValues[0]);
      } catch (err) {
        if (err instanceof InvalidNameError) throw new AppError(400, err.message, 'Invalid folder');
        throw err;
      }
      const prefix = folder ? `${MEDIA_KEY_PREFIX}/${folder}` : MEDIA_KEY_PREFIX;
      const stored = normalizeFilename(filename, kind === 'image' ? 'image' : 'file');

      if (plan.mode === 'svg') {
        if (s.svgTooLarge) {
          throw new AppError(
            413,
            `SVG images are parsed and sanitised in memory: at most ${megabytes(this.limits.maxSvgBytes)} (${this.limits.maxSvgBytes} bytes, MEDIA_MAX_SVG_BYTES); nothing was stored`,
            'File too large',
          );
        }
        let svg: string;
        try {
          svg = (await this.svgSanitizer.sanitize(Buffer.concat(s.svg).toString('utf8'))).svg;
        } catch (err) {
          if (err instanceof SvgTimeoutError) {
            throw new AppError(
              413,
              `this SVG is too costly to sanitise: ${err.message} (MEDIA_SVG_TIMEOUT_MS); nothing was stored`,
              'File too large',
            );
          }
          if (err instanceof InvalidSvgError)
            throw new AppError(
              400,
              `the content looks like SVG but ${err.message}; supported formats: ${SUPPORTED}`,
              INVALID_IMAGE,
            );
          throw err;
        }
        const bytes = Buffer.from(svg, 'utf8');
        const { filename: name, corrected } = correctFilename(stored, 'svg');
        return await this.record(
          clientId,
          fileId,
          kind,
          prefix,
          name,
          async (key) => {
            const obj = await this.storage.put(clientId, key, bytes, FORMAT_INFO.svg.contentType);
            return { bucket: obj.bucket, url: obj.url };
          },
          {
            size: bytes.length,
            content_type: FORMAT_INFO.svg.contentType,
            detected_format: 'svg',
            original_filename: filename,
            format_corrected: corrected,
            sha256: createHash('sha256').update(bytes).digest('hex'),
          },
        );
      }

      await s.stagingDone();
      const corrected =
        kind === 'image' && plan.format ? correctFilename(stored, plan.format) : { filename: stored, corrected: false };
      return await this.record(
        clientId,
        fileId,
        kind,
        prefix,
        corrected.filename,
        async (key) => {
          const obj = await this.storage.copyPrivateToClient(clientId, stagingKey, key);
          return { bucket: obj.bucket, url: obj.url };
        },
        {
          size: s.size,
          content_type: plan.contentType,
          detected_format: plan.format,
          original_filename: filename,
          format_corrected: corrected.corrected,
          sha256: s.sha256,
        },
      );
    } finally {
      // Staged or not, the staging object goes (removing a missing object is not an error).
      const staged = sink as UploadSink | undefined;
      if (staged?.staged) {
        await staged.settled();
        await this.storage.remove(this.storage.resultsBucket, stagingKey).catch(() => undefined);
      }
    }
  }

  /**
   * Reserves `prefix/name` for the file (a name already taken in that folder gets a suffix from
   * the file id), writes the object, and answers with the stored row.
   */
  private async record(
    clientId: string,
    fileId: string,
    kind: UploadKind,
    prefix: string,
    name: string,
    write: (key: string) => Promise<{ bucket: string; url: string }>,
    meta: Pick<
      MediaFileRow,
      'content_type' | 'detected_format' | 'original_filename' | 'format_corrected' | 'sha256'
    > & { size: number },
  ): Promise<UploadResult> {
    const bucket = this.storage.bucketFor(clientId);
    let stored = name;
    let key = objectKey(prefix, stored);
    const row = (): Omit<MediaFileRow, 'created_at'> => ({
      id: fileId,
      client_id: clientId,
      kind,
      bucket,
      key,
      corrected_filename: stored,
      ...meta,
    });
    if (!(await this.repo.insertFile(row()))) {
      stored = withSuffix(name, fileId.slice(0, 8));
      key = objectKey(prefix, stored);
      if (!(await this.repo.insertFile(row())))
        throw new AppError(409, `the key ${key} is taken; upload again`, 'conflict');
    }
    let url: string;
    try {
      ({ url } = await write(key));
    } catch (err) {
      await this.repo.deleteFile(clientId, fileId).catch(() => undefined);
      throw err;
    }
    return {
      success: true,
      file_id: fileId,
      idap_ref: idapRef('media', fileId),
      bucket,
      key,
      url,
      size: Number(meta.size),
      content_type: meta.content_type,
      detected_format: (meta.detected_format as ImageFormat | null) ?? null,
      original_filename: meta.original_filename,
      corrected_filename: stored,
      format_corrected: meta.format_corrected,
    };
  }

  private mapFormError(err: unknown): unknown {
    const e = err as { code?: number; httpCode?: number; message?: string };
    if (typeof e?.code !== 'number') return err;
    if (e.code === formidableErrors.biggerThanMaxFileSize || e.code === formidableErrors.biggerThanTotalMaxFileSize)
      return tooLarge(this.limits);
    if (e.code === formidableErrors.maxFilesExceeded)
      return new ValidationError([{ type: 'too_many', loc: ['body', 'file'], msg: 'send one file per request' }]);
    if (e.code === formidableErrors.aborted)
      return new AppError(400, 'the request was aborted before the body ended', 'Bad request');
    return new AppError(400, `malformed multipart/form-data body: ${e.message ?? 'unreadable'}`, 'Bad request');
  }
}
