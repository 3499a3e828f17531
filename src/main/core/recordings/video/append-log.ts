import { appendFile, readFile, truncate } from 'node:fs/promises';
import type { z } from 'zod';
import { PRIVATE_FILE } from '../../store/private-files.js';

/**
 * The entries of an append-only log of JSON lines (frames.ndjson, segments.ndjson). A last line
 * that a kill cut short is removed from the file, so that the next entry starts a line of its own;
 * lines that do not parse are skipped. A missing file is an empty log.
 */
export async function readLog<T>(file: string, entry: z.ZodType<T>): Promise<T[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const complete = text.lastIndexOf('\n') + 1;
  if (complete < text.length) {
    await truncate(file, Buffer.byteLength(text.slice(0, complete)));
  }
  const entries: T[] = [];
  for (const line of text.slice(0, complete).split('\n')) {
    if (line === '') continue;
    try {
      const parsed = entry.safeParse(JSON.parse(line));
      if (parsed.success) entries.push(parsed.data);
    } catch {
      // Not JSON: skipped.
    }
  }
  return entries;
}

/** Appends one entry as a line; returns the bytes written. */
export async function appendEntry(file: string, value: unknown): Promise<number> {
  const line = `${JSON.stringify(value)}\n`;
  await appendFile(file, line, { mode: PRIVATE_FILE });
  return Buffer.byteLength(line);
}
