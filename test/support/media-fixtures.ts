import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import type { ImageFormat } from '../../lib/media/formats';

/**
 * Real image files of the ten upload formats, small (16x16): JPEG, PNG, WebP, GIF, TIFF and AVIF
 * written by sharp (libvips); BMP and ICO written byte-exact here (sharp writes neither); HEIC
 * committed (test/fixtures/media/tiny.heic, made with libheif's heif-enc: sharp's prebuilt
 * libvips encodes HEIF only as AV1, i.e. AVIF); SVG as text.
 */

const SIZE = 16;
const pixels = () =>
  sharp({ create: { width: SIZE, height: SIZE, channels: 3, background: { r: 30, g: 140, b: 220 } } });

/** A 24-bit bottom-up BMP (BITMAPINFOHEADER) of `w`x`h` pixels of one colour. */
export function bmp(w = SIZE, h = SIZE, rgb: [number, number, number] = [30, 140, 220]): Buffer {
  const rowBytes = Math.ceil((w * 3) / 4) * 4;
  const pixelBytes = rowBytes * h;
  const buf = Buffer.alloc(54 + pixelBytes);
  buf.write('BM', 0, 'latin1');
  buf.writeUInt32LE(buf.length, 2);
  buf.writeUInt32LE(54, 10); // pixel data offset
  buf.writeUInt32LE(40, 14); // BITMAPINFOHEADER
  buf.writeInt32LE(w, 18);
  buf.writeInt32LE(h, 22);
  buf.writeUInt16LE(1, 26); // planes
  buf.writeUInt16LE(24, 28); // bits per pixel
  buf.writeUInt32LE(0, 30); // BI_RGB
  buf.writeUInt32LE(pixelBytes, 34);
  buf.writeInt32LE(2835, 38); // 72 dpi
  buf.writeInt32LE(2835, 42);
  for (let y = 0; y < h; y += 1) {
    for (let x = 0; x < w; x += 1) {
      const at = 54 + y * rowBytes + x * 3;
      buf[at] = rgb[2];
      buf[at + 1] = rgb[1];
      buf[at + 2] = rgb[0];
    }
  }
  return buf;
}

/** An ICO file with one PNG-encoded image (the format of Windows Vista+ icons). */
export function ico(png: Buffer, size = SIZE): Buffer {
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0); // reserved
  header.writeUInt16LE(1, 2); // type: icon
  header.writeUInt16LE(1, 4); // one image
  header.writeUInt8(size % 256, 6);
  header.writeUInt8(size % 256, 7);
  header.writeUInt8(0, 8); // palette
  header.writeUInt8(0, 9);
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(png.length, 14);
  header.writeUInt32LE(22, 18); // offset of the image
  return Buffer.concat([header, png]);
}

export const SVG_CLEAN = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="16" height="16" viewBox="0 0 16 16">
  <defs><circle id="dot" cx="8" cy="8" r="4" fill="#1e8cdc"/></defs>
  <rect width="16" height="16" fill="#ffffff"/>
  <use xlink:href="#dot"/>
</svg>
`;

/** An SVG that runs script, handles events, loads remote things and embeds HTML. */
export const SVG_HOSTILE = `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="16" height="16" onload="alert('onload')">
  <script type="text/javascript">alert('script')</script>
  <style>@import url(https://tracker.example/x.css); rect { fill: #1e8cdc }</style>
  <rect width="16" height="16" onclick="alert('click')"/>
  <image xlink:href="https://tracker.example/pixel.png" width="1" height="1"/>
  <use href="https://tracker.example/sprite.svg#icon"/>
  <a href="javascript:alert('link')"><text x="1" y="12">hi</text></a>
  <foreignObject width="16" height="16"><iframe xmlns="http://www.w3.org/1999/xhtml" src="https://tracker.example/frame"/></foreignObject>
  <rect width="1" height="1" style="fill: url(https://tracker.example/paint)"/>
</svg>
`;

export type Fixtures = Record<ImageFormat, Buffer>;

let cached: Promise<Fixtures> | undefined;

/** One real file per format, generated once per test file. */
export function imageFixtures(): Promise<Fixtures> {
  cached ??= (async () => {
    const png = await pixels().png().toBuffer();
    return {
      jpeg: await pixels().jpeg().toBuffer(),
      png,
      webp: await pixels().webp().toBuffer(),
      gif: await pixels().gif().toBuffer(),
      tiff: await pixels().tiff().toBuffer(),
      avif: await pixels().avif().toBuffer(),
      heic: readFileSync(join(__dirname, '..', 'fixtures', 'media', 'tiny.heic')),
      bmp: bmp(),
      ico: ico(png),
      svg: Buffer.from(SVG_CLEAN, 'utf8'),
    };
  })();
  return cached;
}

/** A minimal but real PDF (not an image). */
export const PDF = Buffer.from(
  '%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
  'latin1',
);
