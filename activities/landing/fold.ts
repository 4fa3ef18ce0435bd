import sharp from 'sharp';

/**
 * The fold (the viewport's area at the top of the page) cut from the full-page PNG. Chromium shoots
 * a full page beyond the viewport without laying the page out again (Playwright's `fullPage`:
 * `captureBeyondViewport`): a 100vh hero keeps the viewport's height, and fixed elements sit where
 * the viewport at the top has them. So the full page's top is the fold, pixel for pixel
 * (test/integration/landing-capture.test.ts compares it with a viewport screenshot), and one
 * screenshot serves both files. The contexts have no device scale factor: a CSS pixel is a pixel.
 */
export async function foldOf(fullPng: Buffer, viewport: { width: number; height: number }): Promise<Buffer> {
  const image = sharp(fullPng);
  const { width = viewport.width, height = viewport.height } = await image.metadata();
  return image
    .extract({ left: 0, top: 0, width: Math.min(width, viewport.width), height: Math.min(height, viewport.height) })
    .png()
    .toBuffer();
}
