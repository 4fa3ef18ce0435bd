/**
 * Object names of uploads: the client's `folder` and filename become an object key inside the
 * client's bucket, so nothing in them may climb out of the folder, hide a file, or carry control
 * characters. Odd but harmless names are normalised; a path that tries to leave the folder is refused.
 */

export const MAX_FOLDER_DEPTH = 10;
export const MAX_FOLDER_LENGTH = 512;
export const MAX_FILENAME_LENGTH = 180;

export class InvalidNameError extends Error {}

/** One path segment or filename: NFC, letters/digits of any script and `._-`; anything else -> `-`. */
function cleanSegment(raw: string): string {
  const cleaned = raw
    .normalize('NFC')
    .replace(/[^\p{L}\p{N}._-]+/gu, '-')
    .replace(/-{2,}/g, '-')
    // No hidden names (`..`, `.env`, `-rf`).
    .replace(/^[.-]+/, '');
  return trimDotsAndDashes(cleaned);
}

/**
 * Without dots or dashes at the end. A loop, not `/[.-]+$/`: that regex is quadratic on a long run of
 * dots that does not end the name (`a....a.png` with a million dots took minutes of the API's thread).
 */
function trimDotsAndDashes(name: string): string {
  let end = name.length;
  while (end > 0 && (name[end - 1] === '.' || name[end - 1] === '-')) end -= 1;
  return name.slice(0, end);
}

/**
 * The folder as a key prefix without leading or trailing slashes (`''` for none). `\` counts as a
 * separator; empty and `.` segments are dropped; a `..` segment (also written with encoded dots or
 * surrounded by spaces) is refused, as are control characters, more than MAX_FOLDER_DEPTH levels
 * and more than MAX_FOLDER_LENGTH characters.
 */
export function normalizeFolder(raw: string | undefined): string {
  if (raw === undefined) return '';
  if (raw.length > MAX_FOLDER_LENGTH)
    throw new InvalidNameError(`folder is longer than ${MAX_FOLDER_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new InvalidNameError('folder contains control characters');
  const segments = raw.split(/[/\\]+/).map((s) => s.trim());
  const out: string[] = [];
  for (const segment of segments) {
    if (segment === '' || segment === '.') continue;
    let decoded = segment;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      // Not percent-encoding: the segment is taken as written.
    }
    if (/^\.{2,}$/.test(decoded.trim()))
      throw new InvalidNameError(`folder may not contain '..' (it would leave the folder): ${JSON.stringify(raw)}`);
    const clean = cleanSegment(segment);
    if (clean === '')
      throw new InvalidNameError(
        `folder segment ${JSON.stringify(segment)} has no usable characters (letters, digits, '.', '_', '-')`,
      );
    out.push(clean);
  }
  if (out.length > MAX_FOLDER_DEPTH) throw new InvalidNameError(`folder is deeper than ${MAX_FOLDER_DEPTH} levels`);
  return out.join('/');
}

/**
 * The uploaded file's name as stored: the last path segment of what the client sent (browsers
 * may send `C:\fakepath\x.png`), cleaned like a folder segment, at most MAX_FILENAME_LENGTH
 * characters with the extension kept; `fallback` when nothing usable is left.
 */
export function normalizeFilename(raw: string | null | undefined, fallback = 'file'): string {
  const base =
    (raw ?? '')
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .split(/[/\\]/)
      .pop() ?? '';
  let name = cleanSegment(base.trim());
  if (name === '') return fallback;
  if (name.length > MAX_FILENAME_LENGTH) {
    const ext = /\.[\p{L}\p{N}]{1,10}$/u.exec(name)?.[0] ?? '';
    name = trimDotsAndDashes(name.slice(0, MAX_FILENAME_LENGTH - ext.length)) + ext;
  }
  return name;
}

/** `folder/name`, or `name` when there is no folder. */
export const objectKey = (folder: string, filename: string) => (folder ? `${folder}/${filename}` : filename);

/** `name.ext` -> `name-<suffix>.ext`: the key of a second upload of the same name to the same folder. */
export function withSuffix(filename: string, suffix: string): string {
  const m = /^(.*?)(\.[\p{L}\p{N}]{1,10})?$/u.exec(filename);
  return `${m?.[1] ?? filename}-${suffix}${m?.[2] ?? ''}`;
}
