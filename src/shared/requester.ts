/** Room enough for a product and its version; a longer name is cut. */
const NAME_CHARS = 60;

/**
 * How an approval names who sent its action, for a person to tell agents apart: the client's own
 * name ("Python SDK 2.39.0", "MCP client Claude 0.9", "curl/8.5.0") and the prefix of the key it
 * used, never more of the key. The name comes from the client: printable ASCII only, and short.
 */
export function requesterName(client: string | undefined, keyPrefix: string | undefined): string {
  const name = printable(client ?? '').slice(0, NAME_CHARS) || 'a client that gave no name';
  return keyPrefix ? `${name} (key ${keyPrefix}…)` : name;
}

/** Printable ASCII and single spaces: what a client says of itself, shown and sent in webhooks. */
export function printable(text: string): string {
  return text
    .replace(/[^\x20-\x7e]/g, '')
    .replace(/ +/g, ' ')
    .trim();
}

/**
 * The window marks every request it sends as a person's with this header: an action or a tab's is
 * recorded as theirs and no policy holds it (they would be the one to approve it); a computer they
 * end, a task they pause, resume, message or cancel names "a person in the window".
 */
export const WINDOW_SOURCE = { header: 'x-benchtop-source', value: 'live-view' } as const;
