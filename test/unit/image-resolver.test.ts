import { networkInterfaces } from 'node:os';
import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/main/core/config.js';
import { ImageResolver } from '../../src/main/core/models/image-resolver.js';
import type { ScreenshotStore } from '../../src/main/core/screenshots/screenshot-store.js';

const png = (size: number) =>
  `data:image/png;base64,${Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47]), Buffer.alloc(size - 4)]).toString('base64')}`;

/** No screenshot exists: these tests are about other URLs. */
const noScreenshots = { read: () => Promise.resolve(undefined) } as unknown as ScreenshotStore;

function resolver(baseUrl: string, limits: Record<string, number> = {}, host = '127.0.0.1') {
  const settings = resolveSettings({ stored: {}, flags: { limits, server: { host } } });
  return new ImageResolver(noScreenshots, () => baseUrl, settings);
}

describe('ImageResolver', () => {
  it('leaves out an earlier image that no longer fits the byte budget, and fails a required one', async () => {
    const images = resolver('http://127.0.0.1:4422', { image_bytes_per_request: 100_000 });
    const loaded = await images.resolveAll([
      { url: png(60_000), param: 'input.0.content.0.image_url', required: true },
      { url: png(60_000), param: 'input.1.content.0.image_url', required: false },
      { url: png(30_000), param: 'input.2.content.0.image_url', required: false },
    ]);
    expect(loaded.map((image) => image?.mediaType ?? null)).toEqual([
      'image/png',
      null,
      'image/png',
    ]);
    await expect(
      images.resolveAll([
        { url: png(60_000), param: 'input.0.content.0.image_url', required: true },
        { url: png(60_000), param: 'input.0.content.1.image_url', required: true },
      ]),
    ).rejects.toMatchObject({ param: 'input.0.content.1.image_url' });
  });

  it('counts only the images the request sends against limits.images_per_request', async () => {
    const images = resolver('http://127.0.0.1:4422', { images_per_request: 2 });
    const earlier = { url: png(16), param: 'input.0.content.0.image_url', required: false };
    const sent = { url: png(16), param: 'input.1.content.0.image_url', required: true };
    expect(await images.resolveAll([earlier, earlier, sent, sent])).toHaveLength(4);
    await expect(
      images.resolveAll([sent, sent, { ...sent, param: 'input.1.content.2.image_url' }]),
    ).rejects.toMatchObject({ param: 'input.1.content.2.image_url' });
  });

  it('knows itself under its loopback addresses and, listening on every interface, any of its addresses', async () => {
    const refused = (images: ImageResolver, url: string) =>
      images.resolveAll([{ url, param: 'p', required: true }]).then(
        () => 'loaded',
        (error: Error) => error.message,
      );
    const loopback = resolver('http://127.0.0.1:4422');
    for (const url of [
      'http://[::1]:4422/x',
      'http://127.9.9.9:4422/x',
      'http://0.0.0.0:4422/x',
      'http://LOCALHOST:4422/x',
      'http://app.localhost:4422/x',
      'http://2130706433:4422/x',
    ]) {
      expect(await refused(loopback, url), url).toMatch(/this Benchtop server itself/);
    }
    const external = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && !address.internal)?.address;
    if (external) {
      const host = external.includes(':') ? `[${external}]` : external;
      // Listening on 0.0.0.0, the server's own URL names 127.0.0.1.
      const everywhere = resolver('http://127.0.0.1:4422', {}, '0.0.0.0');
      expect(await refused(everywhere, `http://${host}:4422/x`)).toMatch(/Benchtop server itself/);
    }
  });
});
