import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onMessages, sendMessage } from '../../src/main/core/computers/desktop/worker-channel.js';

const dir = mkdtempSync(join(tmpdir(), 'benchtop-channel-'));
let server: Server | undefined;
afterAll(() => {
  server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Both ends of a real Unix socket. */
async function socketPair(): Promise<[Socket, Socket]> {
  const path = join(dir, `s${Math.random()}`);
  server = createServer();
  await new Promise<void>((resolve) => server!.listen(path, resolve));
  const accepted = new Promise<Socket>((resolve) => server!.once('connection', resolve));
  const client = connect(path);
  return [client, await accepted];
}

describe("the desktop worker's channel", () => {
  it('brings every message whole and in order, images as their bytes', async () => {
    const [worker, main] = await socketPair();
    const screenshot = randomBytes(5 * 2 ** 20);
    const sent = [
      { id: 0, ok: true, result: 'ready' },
      { id: 1, ok: true, result: { png: screenshot, width: 1280, height: 720 } },
      { id: 2, ok: false, error: 'XTestFakeButtonEvent failed' },
      ...Array.from({ length: 200 }, (_, i) => ({ id: 3 + i, ok: true, result: null })),
    ];
    const received: unknown[] = [];
    const all = new Promise<void>((resolve) =>
      onMessages(main, (message) => {
        received.push(message);
        if (received.length === sent.length) resolve();
      }),
    );
    for (const message of sent) sendMessage(worker, message);
    await all;
    expect(received.length).toBe(sent.length);
    expect(received.map((message) => (message as { id: number }).id)).toEqual(
      sent.map(({ id }) => id),
    );
    const image = (received[1] as { result: { png: Uint8Array } }).result.png;
    expect(Buffer.from(image).equals(screenshot)).toBe(true);
    expect(received[2]).toEqual(sent[2]);
    worker.destroy();
    main.destroy();
  });

  it('joins a message that comes a byte at a time', async () => {
    const [worker, main] = await socketPair();
    const received: unknown[] = [];
    const both = new Promise<void>((resolve) =>
      onMessages(main, (message) => {
        received.push(message);
        if (received.length === 2) resolve();
      }),
    );
    // What sendMessage writes, cut into single bytes.
    const frames: Buffer[] = [];
    const recorder = { cork() {}, uncork() {}, write: (chunk: Buffer) => frames.push(chunk) };
    sendMessage(recorder as unknown as Socket, { id: 7, request: { op: 'type', text: 'héllo' } });
    sendMessage(recorder as unknown as Socket, { id: 8, request: { op: 'size' } });
    const bytes = Buffer.concat(frames);
    for (const byte of bytes) {
      worker.write(Buffer.from([byte]));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await both;
    expect(received).toEqual([
      { id: 7, request: { op: 'type', text: 'héllo' } },
      { id: 8, request: { op: 'size' } },
    ]);
    worker.destroy();
    main.destroy();
  });
});
