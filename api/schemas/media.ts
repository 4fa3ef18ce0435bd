import { z } from 'zod';
import { IMAGE_FORMATS } from '../../lib/media/formats';
import { uuidParam } from './params';

// ---- uploads (spec §4.8) -------------------------------------------------------------------

/** The multipart body, for the OpenAPI document (the handler reads the stream itself). */
export const uploadBodyDoc = z.strictObject({
  file: z.string().meta({ format: 'binary' }).describe('the file (one part named file)'),
  folder: z
    .string()
    .max(512)
    .optional()
    .describe(
      "folder path inside the client's bucket, e.g. blog/2026; '\\' counts as '/', '..' is refused, other characters outside letters, digits and ._- become '-'",
    ),
});

export const uploadResponse = z.object({
  success: z.literal(true),
  file_id: z.string().uuid().describe('the media id: GET /api/v1/idap/media/{file_id}'),
  idap_ref: z.string().describe('idap://media/{file_id}'),
  bucket: z.string().describe("the client's bucket"),
  key: z.string().describe('media/{folder}/{corrected_filename}'),
  url: z.string().describe('public address of the object: {media_url}/{bucket}/{key}'),
  size: z.number().int().describe('bytes stored (an SVG: after sanitising)'),
  content_type: z.string(),
  detected_format: z
    .enum(IMAGE_FORMATS)
    .nullable()
    .describe('from the leading bytes; the files endpoint reports it when it recognises an image, else null'),
  original_filename: z.string().nullable().describe('the filename the client sent'),
  corrected_filename: z
    .string()
    .describe('the stored filename: normalised, with the extension of the detected format (images)'),
  format_corrected: z.boolean().describe('true when the extension was changed or added to match the content'),
});

export const mediaIdParams = z.object({ media_id: uuidParam('media id (the file_id of an upload, a UUID)') });

// ---- video import (spec §4.8, §2.14) --------------------------------------------------------

export const videoImportBody = z.strictObject({
  url: z
    .string()
    .trim()
    .url()
    .max(2000)
    .refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL')
    .describe('address of the video to import (a page PeerTube can import from, or a media file)'),
  title: z
    .string()
    .trim()
    .min(3)
    .max(120)
    .optional()
    .describe('defaults to the source title (PeerTube: 3-120 characters)'),
  description: z.string().max(10000).optional(),
  privacy: z
    .union([z.literal(1), z.literal(2), z.literal(3)], {
      error: 'privacy must be 1 (public), 2 (unlisted) or 3 (private)',
    })
    .default(2)
    .describe('1 public, 2 unlisted (default), 3 private'),
});

export const VIDEO_STATES = ['importing', 'processing', 'published', 'failed'] as const;

export const videoResponse = z.object({
  success: z.literal(true),
  video_id: z.number().int(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  watch_url: z.string(),
  embed_url: z.string(),
  channel_name: z.string().nullable(),
  privacy: z.number().int(),
  state: z.enum(VIDEO_STATES).describe('importing after a start; processing (transcoding, moving), published, failed'),
  state_label: z.string().describe("PeerTube's own label of the state"),
});

export const videoIdParams = z.object({
  video_id: z.coerce
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1)
    .describe('video_id from the import'),
});
