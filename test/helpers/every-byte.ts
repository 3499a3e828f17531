import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readZip } from './bundle-fixture.js';

/** Bytes to search for a secret, named for the failure message. */
export type Part = { name: string; bytes: Buffer };

/** Every byte of a zip: itself, each entry inflated, and the entries of zips inside it. */
export async function everyByte(zip: Buffer, name = 'the zip'): Promise<Part[]> {
  const parts = [{ name, bytes: zip }];
  for (const [entryName, entry] of await readZip(zip)) {
    parts.push({ name: `${name} › ${entryName}`, bytes: entry.data });
    if (entryName.endsWith('.zip'))
      parts.push(...(await everyByte(entry.data, `${name} › ${entryName}`)));
  }
  return parts;
}

/** Every file under a folder, zips opened. */
export async function everyFile(dir: string): Promise<Part[]> {
  const out: Part[] = [];
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    const bytes = readFileSync(path);
    out.push({ name, bytes });
    if (name.endsWith('.zip')) out.push(...(await everyByte(bytes, name)));
  }
  return out;
}
