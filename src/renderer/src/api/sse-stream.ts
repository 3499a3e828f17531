export type SseMessage = { event: string | undefined; data: unknown };

/**
 * Reads a Server-Sent Events body. EventSource cannot send an Authorization header, so streams are
 * fetched and parsed here. Resolves when the server closes the stream.
 */
export async function readSse(
  body: ReadableStream<Uint8Array>,
  onMessage: (message: SseMessage) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message = parseBlock(buffer.slice(0, end));
      buffer = buffer.slice(end + 2);
      if (message) onMessage(message);
    }
  }
}

function parseBlock(block: string): SseMessage | undefined {
  let event: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('event:')) event = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  // Heartbeat comments carry no data.
  if (data.length === 0) return undefined;
  return { event, data: JSON.parse(data.join('\n')) as unknown };
}
