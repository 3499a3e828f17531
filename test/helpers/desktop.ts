import { readFile } from 'node:fs/promises';
import sharp from 'sharp';
import { startTimeOf } from '../../src/main/core/runtime/process-table.js';
import { commandOf } from './processes.js';
import type { TestServer } from './test-server.js';

/** The workspace folder of a computer (where its xterm's shell runs). */
export function workspaceOf(server: TestServer, id: string): string {
  return server.core.computers.get('local', id).spec.workspace;
}

export function displayOf(server: TestServer, id: string): string {
  return server.core.computers.get('local', id).spec.env.DISPLAY!;
}

/** Types a shell line into the desktop's xterm (clicked first so it has focus). */
export async function typeInTerminal(server: TestServer, id: string, line: string): Promise<void> {
  await server.request('POST', `/computers/${id}/click`, { x: 200, y: 150 });
  const typed = await server.request('POST', `/computers/${id}/type`, { text: line });
  if (typed.body.status !== 'success') throw new Error(`type failed: ${typed.text}`);
}

/**
 * Starts `cat > name` in the desktop's terminal and waits until the shell has run it (the file
 * exists), so what is typed next goes to cat and not into a line the shell has yet to read.
 */
export async function startCat(server: TestServer, id: string, name: string): Promise<void> {
  await typeInTerminal(server, id, `cat > ${name}\n`);
  await waitForFile(server, id, name, (text) => text !== undefined);
}

/** Waits until the workspace file satisfies `done`; the failure says what the file held. */
export async function waitForFile(
  server: TestServer,
  id: string,
  name: string,
  done: (text: string | undefined) => boolean,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let text = await readWorkspaceFile(server, id, name);
  while (!done(text)) {
    if (Date.now() > deadline) {
      // What runs on the display says whether the terminal's program is still there to write.
      const running = await processesOnDisplay(displayOf(server, id));
      const commands = running.map((pid) => commandOf(pid).trim());
      // Where typing went: the window that has the focus, and where the pointer is.
      const focus = await server.request('POST', `/computers/${id}/debug`, {
        command: 'xdotool getwindowfocus getwindowname; xdotool getmouselocation',
      });
      throw new Error(
        `${name} not as expected within ${timeoutMs} ms: ${text === undefined ? 'no such file' : JSON.stringify(text)}; running on the display: ${commands.join(' | ')}; focus and pointer: ${JSON.stringify(focus.body.result ?? focus.body)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
    text = await readWorkspaceFile(server, id, name);
  }
}

export async function readWorkspaceFile(
  server: TestServer,
  id: string,
  name: string,
): Promise<string | undefined> {
  return readFile(`${workspaceOf(server, id)}/${name}`, 'utf8').catch(() => undefined);
}

/** Raw RGB pixels of a screenshot taken through the API. */
export async function screenPixels(server: TestServer, id: string): Promise<Buffer> {
  const shot = await server.request('POST', `/computers/${id}/screenshot`, { base64: true });
  return sharp(Buffer.from(shot.body.result.base64 as string, 'base64'))
    .raw()
    .toBuffer();
}

/** Screen pixels once two screenshots in a row are identical (a new shell's prompt has drawn). */
export async function settledPixels(server: TestServer, id: string): Promise<Buffer> {
  let previous = await screenPixels(server, id);
  for (let attempt = 0; attempt < 40; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const current = await screenPixels(server, id);
    if (differingPixels(previous, current) === 0) return current;
    previous = current;
  }
  throw new Error('the screen never settled');
}

export function differingPixels(a: Buffer, b: Buffer): number {
  let count = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i += 3) {
    if (a[i] !== b[i] || a[i + 1] !== b[i + 1] || a[i + 2] !== b[i + 2]) count++;
  }
  return count + Math.abs(a.length - b.length) / 3;
}

/** Now in clock ticks since boot (the clock of startTimeOf), for `startedBefore`. */
export async function processClock(): Promise<number> {
  const uptime = await readFile('/proc/uptime', 'latin1');
  return Math.ceil(Number(uptime.split(' ')[0]) * CLOCK_TICKS);
}

/** Linux reports process start times in USER_HZ, 100 on every architecture it runs on. */
const CLOCK_TICKS = 100;

/**
 * Pids of processes that run on an X display (their environment says DISPLAY=name), Xvfb included.
 * Display numbers are reused as soon as they are free: another test file's desktop can take the
 * number of one just deleted here. What a deleted desktop left behind started before its delete
 * (`startedBefore`, from processClock), its successor's processes after.
 */
export async function processesOnDisplay(
  name: string,
  { startedBefore = Infinity }: { startedBefore?: number } = {},
): Promise<number[]> {
  const { readdir } = await import('node:fs/promises');
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'latin1').catch(() => '');
    // Undefined for a process gone or a zombie.
    const started = startTimeOf(Number(entry));
    if (started === undefined || !(Number(started) < startedBefore)) continue;
    if (
      `\0${environ}`.includes(`\0DISPLAY=${name}\0`) ||
      (cmdline.startsWith(`Xvfb\0-displayfd`) &&
        cmdline.length > 0 &&
        (await xvfbDisplay(entry)) === name)
    ) {
      found.push(Number(entry));
    }
  }
  return found;
}

async function xvfbDisplay(pid: string): Promise<string | undefined> {
  // Xvfb started with -displayfd holds its display's lock file; match it through /tmp/.X<N>-lock.
  const { readdir } = await import('node:fs/promises');
  for (const file of await readdir('/tmp').catch(() => [] as string[])) {
    const match = /^\.X(\d+)-lock$/.exec(file);
    if (!match) continue;
    const owner = (await readFile(`/tmp/${file}`, 'latin1').catch(() => '')).trim();
    if (owner === pid) return `:${match[1]}`;
  }
  return undefined;
}
