import type { AttentionItem } from '../../shared/approvals.js';
import { attentionNotice } from '../../shared/describe-attention.js';

/** What core reports: each new item that waits for a person, with its organization. */
export type AttentionFeed = {
  subscribe(listener: (org: string, item: AttentionItem) => void): () => void;
};

/** Shows one OS notification; `onClick` runs when the person clicks it. */
export type ShowNotification = (
  notice: { title: string; body: string },
  onClick: () => void,
) => void;

/** The organization of the window's own key: the items its Needs-you screen lists. */
const WINDOW_ORG = 'local';

/** The route of the Needs-you screen, where a clicked notification opens the window. */
export const ATTENTION_ROUTE = '#/attention';

/**
 * An OS notification for each new item the window can show (its organization's); a click opens
 * the window on the Needs-you screen. Returns the unsubscribe.
 */
export function notifyAttention(
  feed: AttentionFeed,
  show: ShowNotification,
  openAt: (route: string) => void,
): () => void {
  return feed.subscribe((org, item) => {
    if (org !== WINDOW_ORG) return;
    show(attentionNotice(item), () => openAt(ATTENTION_ROUTE));
  });
}
