import type { Socket } from 'node:net';
import { deserialize, serialize } from 'node:v8';

/**
 * Messages between the server and a desktop worker over a Unix socket: each one's v8
 * serialization (structured clone, so images travel as bytes) after its length in four bytes,
 * big-endian, as Node's own IPC channel frames them with 'advanced' serialization. The worker
 * does not use that channel: a process with one must be forked by the server itself, which
 * stops the server's event loop for the fork (see spawn-relay.ts); with a socket of its own it
 * starts from the spawn relay like any other program. Node offers no framing for a plain
 * socket, and these twenty lines need no library.
 */

const HEAD = 4;

export function sendMessage(socket: Socket, message: unknown): void {
  const body = serialize(message);
  const head = Buffer.allocUnsafe(HEAD);
  head.writeUInt32BE(body.length);
  socket.cork();
  socket.write(head);
  socket.write(body);
  socket.uncork();
}

/** Calls `handle` with each message the socket brings, in order. */
export function onMessages(socket: Socket, handle: (message: unknown) => void): void {
  // Chunks are joined when a length or a whole message has come, not at each chunk (a
  // screenshot is megabytes, in 64 KiB chunks).
  let chunks: Buffer[] = [];
  let length = 0;
  let size: number | undefined;
  const joined = () => {
    if (chunks.length > 1) chunks = [Buffer.concat(chunks, length)];
    return chunks[0]!;
  };
  socket.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    length += chunk.length;
    for (;;) {
      if (size === undefined) {
        if (length < HEAD) return;
        size = joined().readUInt32BE(0);
      }
      if (length < HEAD + size) return;
      const all = joined();
      const message: unknown = deserialize(all.subarray(HEAD, HEAD + size));
      const rest = all.subarray(HEAD + size);
      chunks = rest.length > 0 ? [rest] : [];
      length = rest.length;
      size = undefined;
      handle(message);
    }
  });
}
