/**
 * What Benchtop's CDP endpoint does with each message a client sends before the computer's
 * Chromium sees it. The browser holds only the computer, so nearly everything passes; refused are
 * the methods that would reach beyond the computer or end what Benchtop itself holds.
 */
export const DENIED_METHODS: ReadonlyMap<string, string> = new Map([
  [
    'Browser.close',
    'the browser is the computer and Benchtop ends it: end the computer with DELETE /computers/{id} (to leave, just disconnect)',
  ],
  ['Browser.crash', 'it would crash the computer'],
  ['Browser.crashGpuProcess', "it would crash the computer's GPU process"],
  [
    'Target.createBrowserContext',
    "a computer is one browser context, and pages of another would be hidden from Benchtop's tabs, events and recording; open pages in the default context",
  ],
  ['Target.disposeBrowserContext', "the computer's context belongs to Benchtop"],
  [
    'Target.exposeDevToolsProtocol',
    "it would hand a page the browser's protocol, around this endpoint's checks",
  ],
]);

/** Methods whose downloadPath is a folder of the machine Benchtop runs on. */
const DOWNLOAD_METHODS = new Set(['Browser.setDownloadBehavior', 'Page.setDownloadBehavior']);

/** Send `forward` (command `id`, for `method`) to the browser, or answer the client with `reply`. */
export type Screened = { forward: string; id: number; method: string } | { reply: string };

type Message = { id: number; method: string; sessionId?: string; params?: unknown };

/**
 * Checks one client message. What passes is sent re-serialized, never as received: JSON with a
 * key given twice ("method" twice) could otherwise mean one method here and another to Chromium.
 * A download folder named by the client becomes the computer's own (`downloadsDir`): a client
 * must not write files wherever Benchtop may.
 */
export function screenClientMessage(text: string, downloadsDir: string): Screened {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { reply: errorReply(undefined, undefined, -32700, 'Message must be valid JSON') };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { reply: errorReply(undefined, undefined, -32600, 'Message must be a JSON object') };
  }
  const message = parsed as Partial<Message>;
  if (!Number.isSafeInteger(message.id)) {
    return {
      reply: errorReply(undefined, undefined, -32600, "Message must have integer 'id' property"),
    };
  }
  const id = message.id!;
  const sessionId = typeof message.sessionId === 'string' ? message.sessionId : undefined;
  if (message.sessionId !== undefined && sessionId === undefined) {
    return { reply: errorReply(id, undefined, -32600, "'sessionId' must be a string") };
  }
  if (typeof message.method !== 'string') {
    return {
      reply: errorReply(id, sessionId, -32600, "Message must have string 'method' property"),
    };
  }
  const reason = DENIED_METHODS.get(message.method);
  if (reason) {
    const text = `${message.method} is refused by Benchtop's CDP endpoint: ${reason}`;
    return { reply: errorReply(id, sessionId, -32000, text) };
  }
  if (DOWNLOAD_METHODS.has(message.method) && isObject(message.params)) {
    if (message.params.downloadPath !== undefined) message.params.downloadPath = downloadsDir;
  }
  return { forward: JSON.stringify(message), id, method: message.method };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorReply(
  id: number | undefined,
  sessionId: string | undefined,
  code: number,
  message: string,
): string {
  return JSON.stringify({
    ...(id !== undefined && { id }),
    error: { code, message },
    ...(sessionId !== undefined && { sessionId }),
  });
}

const RESPONSE_START = Buffer.from('{"id":');

/**
 * The id of a browser message that answers a command, read from its first bytes without parsing
 * the rest (a screenshot's answer is megabytes): Chromium writes "id" first in every answer, and
 * events have none.
 */
export function answeredId(data: Buffer): number | undefined {
  if (data.length <= RESPONSE_START.length) return undefined;
  if (data.compare(RESPONSE_START, 0, RESPONSE_START.length, 0, RESPONSE_START.length) !== 0) {
    return undefined;
  }
  let id = 0;
  let at = RESPONSE_START.length;
  for (; at < data.length && at < RESPONSE_START.length + 16; at++) {
    const digit = data[at]! - 0x30;
    if (digit < 0 || digit > 9) break;
    id = id * 10 + digit;
  }
  return at > RESPONSE_START.length ? id : undefined;
}
