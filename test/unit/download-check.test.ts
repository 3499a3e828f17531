import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buffer as readAll } from 'node:stream/consumers';
import { gzipSync } from 'node:zlib';
import yazl from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkDownload,
  MAX_DOWNLOAD_BYTES,
} from '../../src/main/core/recordings/bundle/download-check.js';

const SECRET = 'vault-Hq7rT2kL9xW4';
const holds = (text: string) => text.includes(SECRET);

async function zipOf(files: Record<string, Buffer | string>, compress = true): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const [name, content] of Object.entries(files)) {
    zip.addBuffer(Buffer.from(content), name, { compress });
  }
  zip.end();
  return readAll(zip.outputStream);
}

describe('a download checked for secrets before it goes into a bundle', () => {
  let dir: string;
  let n = 0;
  const check = async (bytes: Buffer | string, maxUnpacked?: number) => {
    const path = join(dir, `file-${n++}`);
    await writeFile(path, bytes);
    return checkDownload(path, Buffer.byteLength(bytes), holds, maxUnpacked);
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'download-check-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('finds the secret in text, UTF-8 or UTF-16 in either byte order', async () => {
    expect(await check(`user,token\nann,${SECRET}\n`)).toBe('secret');
    expect(await check('user,token\nann,none\n')).toBeUndefined();
    const utf16 = Buffer.from(`\ufefftoken=${SECRET}\r\n`, 'utf16le');
    expect(await check(utf16)).toBe('secret');
    expect(await check(Buffer.from(utf16).swap16())).toBe('secret');
    expect(await check(Buffer.alloc(0))).toBeUndefined();
  });

  it('finds it in what a zip packs (an office document) and in a gzip, also a zip in a zip', async () => {
    const docx = await zipOf({
      '[Content_Types].xml': '<Types/>',
      'word/document.xml': `<w:document><w:t>Your key: ${SECRET}</w:t></w:document>`,
    });
    expect(docx.includes(SECRET), 'deflated: not in the bytes as they are').toBe(false);
    expect(await check(docx)).toBe('secret');
    expect(await check(gzipSync(`token=${SECRET}`))).toBe('secret');
    const nested = await zipOf({ 'export/inner.zip': await zipOf({ 'a.txt': SECRET }) });
    expect(await check(nested)).toBe('secret');
    // The same documents without it go in.
    expect(await check(await zipOf({ 'word/document.xml': '<w:t>Your order</w:t>' }))).toBe(
      undefined,
    );
    expect(await check(gzipSync('token=none'))).toBeUndefined();
  });

  it('leaves out what is too large to check, packed or unpacked, and reads a damaged zip as bytes', async () => {
    const path = join(dir, 'big');
    await writeFile(path, 'x');
    expect(await checkDownload(path, MAX_DOWNLOAD_BYTES + 1, holds)).toBe('too_large');
    // Small packed, large unpacked: a bomb, or simply more than a bundle reads.
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    expect(await check(gzipSync(zeros), 1024 * 1024)).toBe('too_large_unpacked');
    expect(await check(await zipOf({ 'a.bin': zeros }), 1024 * 1024)).toBe('too_large_unpacked');
    expect(await check(await zipOf({ 'a.bin': zeros }), 8 * 1024 * 1024)).toBeUndefined();
    const damaged = Buffer.concat([Buffer.from([0x50, 0x4b, 3, 4]), Buffer.alloc(64, 7)]);
    expect(await check(damaged)).toBeUndefined();
    expect(await check(Buffer.concat([damaged, Buffer.from(SECRET)]))).toBe('secret');
  });
});
