import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { hashPixels, regionHash } from '../../src/main/core/agent/step-check.js';

/** A noisy image (each pixel its own grey, from a fixed sequence): every region hashes apart. */
async function noisyPng(width: number, height: number): Promise<{ png: Buffer; raw: Buffer }> {
  const raw = Buffer.alloc(width * height * 3);
  let seed = 7;
  for (let i = 0; i < raw.length; i += 3) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    raw[i] = raw[i + 1] = raw[i + 2] = seed % 256;
  }
  const png = await sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
  return { png, raw };
}

describe('regionHash', () => {
  it('decodes only the region, and hashes it as the whole screen would', async () => {
    const { png, raw } = await noisyPng(300, 200);
    // Inside, at each edge and corner (the region moves inside the image), off the image.
    const points = [
      { x: 150, y: 100 },
      { x: 3, y: 100 },
      { x: 299, y: 199 },
      { x: 0, y: 0 },
      { x: 280.6, y: 17.4 },
      { x: 900, y: -5 },
    ];
    const hashes = await Promise.all(points.map((at) => regionHash(png, at)));
    expect(hashes).toEqual(points.map((at) => hashPixels(raw, 300, 200, 3, at)));
    expect(new Set(hashes).size).toBe(hashes.length - 1); // (900, -5) is the top-right corner's
  });

  it('hashes the largest square there is in an image smaller than the region', async () => {
    const { png, raw } = await noisyPng(45, 30);
    expect(await regionHash(png, { x: 40, y: 2 })).toBe(
      hashPixels(raw, 45, 30, 3, { x: 40, y: 2 }),
    );
  });
});
