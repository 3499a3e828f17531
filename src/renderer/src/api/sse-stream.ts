import { createParser } from 'eventsource-parser';

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
  // Heartbeat comments are not events: the parser drops them.
  const parser = createParser({
    onEvent: ({ event, data }) => onMessage({ event, data: JSON.parse(data) as unknown }),
  });
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}
