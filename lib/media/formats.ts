import FileType from 'file-type';

/**
 * Image formats of the upload endpoint (spec §4.8) and how they are recognised from their leading
 * bytes. Binary formats are recognised by `file-type` (16.x: the last line that loads as CommonJS
 * under tsx, Jest and the compiled build; 17+ is ESM-only); SVG, a text format, is recognised by
 * parsing it (lib/media/svg.ts).
 */
export const IMAGE_FORMATS = ['jpeg', 'png', 'webp', 'gif', 'bmp', 'ico', 'tiff', 'avif', 'heic', 'svg'] as const;
export type ImageFormat = (typeof IMAGE_FORMATS)[number];

interface FormatInfo {
  /** The extension a corrected filename gets. */
  ext: string;
  /** Extensions that already name the format (no correction). */
  accepted: string[];
  contentType: string;
}

export const FORMAT_INFO: Record<ImageFormat, FormatInfo> = {
  jpeg: { ext: 'jpg', accepted: ['jpg', 'jpeg', 'jpe', 'jfif'], contentType: 'image/jpeg' },
  png: { ext: 'png', accepted: ['png'], contentType: 'image/png' },
  webp: { ext: 'webp', accepted: ['webp'], contentType: 'image/webp' },
  gif: { ext: 'gif', accepted: ['gif'], contentType: 'image/gif' },
  bmp: { ext: 'bmp', accepted: ['bmp', 'dib'], contentType: 'image/bmp' },
  ico: { ext: 'ico', accepted: ['ico'], contentType: 'image/x-icon' },
  tiff: { ext: 'tiff', accepted: ['tif', 'tiff'], contentType: 'image/tiff' },
  avif: { ext: 'avif', accepted: ['avif'], contentType: 'image/avif' },
  heic: { ext: 'heic', accepted: ['heic', 'heif', 'hif'], contentType: 'image/heic' },
  svg: { ext: 'svg', accepted: ['svg'], contentType: 'image/svg+xml' },
};

/** file-type's extension -> our format. */
const FROM_FILE_TYPE: Record<string, Exclude<ImageFormat, 'svg'>> = {
  jpg: 'jpeg',
  png: 'png',
  webp: 'webp',
  gif: 'gif',
  bmp: 'bmp',
  ico: 'ico',
  tif: 'tiff',
  avif: 'avif',
  heic: 'heic',
};

/** Enough leading bytes for every signature file-type reads (its own minimum is 4100). */
export const SNIFF_BYTES = 4100;

export interface Sniffed {
  /** A supported image format, or `svg-candidate` (text that may be SVG: confirmed by parsing). */
  format: Exclude<ImageFormat, 'svg'> | 'svg-candidate' | null;
  /** What file-type recognised, supported or not (e.g. `pdf`), for messages and the files endpoint. */
  mime: string | null;
  ext: string | null;
}

/** Recognises the format from the leading bytes (at least SNIFF_BYTES of them, or the whole file). */
export async function sniff(head: Buffer): Promise<Sniffed> {
  const found = await FileType.fromBuffer(head);
  const format = found ? FROM_FILE_TYPE[found.ext] : undefined;
  // `heic` from file-type also covers `mif1`/`msf1` (generic HEIF); AVIF files carry their own brand.
  if (format) return { format, mime: found?.mime ?? null, ext: found?.ext ?? null };
  if (found && found.ext !== 'xml') return { format: null, mime: found.mime, ext: found.ext };
  return { format: looksLikeSvg(head) ? 'svg-candidate' : null, mime: found?.mime ?? null, ext: found?.ext ?? null };
}

/** Text whose first markup (after an XML declaration, comments and a doctype) is an <svg> element. */
export function looksLikeSvg(head: Buffer): boolean {
  let text = head.toString('utf8').replace(/^\uFEFF/, '');
  if (text.includes('\u0000')) return false;
  // Strip what may precede the root element; an element cut off at the end of `head` still shows `<svg`.
  for (;;) {
    const before = text;
    text = text
      .replace(/^\s+/, '')
      .replace(/^<\?xml[\s\S]*?\?>/, '')
      .replace(/^<!--[\s\S]*?-->/, '')
      .replace(/^<!DOCTYPE\s+svg[^>[]*(\[[\s\S]*?\])?\s*>/i, '');
    if (text === before) break;
  }
  return /^<svg[\s>/]/.test(text) || /^<[A-Za-z_][\w.-]*:svg[\s>/]/.test(text);
}

const EXT_RE = /\.([A-Za-z0-9]{1,10})$/;

export const extensionOf = (filename: string): string | null => EXT_RE.exec(filename)?.[1]?.toLowerCase() ?? null;

/**
 * The filename with the extension of the detected format: `photo.png` holding JPEG bytes becomes
 * `photo.jpg`, a name without an extension gets one, and a name that already names the format
 * (any of its usual extensions, any case) is kept.
 */
export function correctFilename(filename: string, format: ImageFormat): { filename: string; corrected: boolean } {
  const info = FORMAT_INFO[format];
  const ext = extensionOf(filename);
  if (ext && info.accepted.includes(ext)) return { filename, corrected: false };
  // Only a real extension (letters/digits after the last dot) is replaced; `archive.tar` -> `archive.jpg`.
  const stem = ext ? filename.slice(0, -(ext.length + 1)) : filename;
  return { filename: `${stem || 'image'}.${info.ext}`, corrected: true };
}
