import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { AttentionItem } from '../../../shared/approvals.js';
import { attentionKey, attentionNotice } from '../../../shared/describe-attention.js';
import { useApi } from '../api/api-context.js';
import { attentionQuery } from '../api/queries.js';
import { href } from '../hooks/use-hash-route.js';

/**
 * The items not seen before, and `seen` updated to what is waiting now. The first answer only
 * sets what was already waiting: opening the window does not raise a notification for each.
 */
export function newAttention(
  seen: Set<string> | undefined,
  items: readonly AttentionItem[],
): { fresh: AttentionItem[]; seen: Set<string> } {
  const now = new Set(items.map(attentionKey));
  if (!seen) return { fresh: [], seen: now };
  return { fresh: items.filter((item) => !seen.has(attentionKey(item))), seen: now };
}

/** In the Electron app the main process raises OS notifications itself. */
const inElectron = () => Boolean((window as { benchtop?: unknown }).benchtop);

/** Whether this page may notify, and a way to ask (from a person's click, never on load). */
export function useNotificationPermission() {
  const supported = typeof Notification !== 'undefined' && !inElectron();
  const [permission, setPermission] = useState(() =>
    supported ? Notification.permission : 'denied',
  );
  const ask = async () => setPermission(await Notification.requestPermission());
  return { supported, permission, ask };
}

/**
 * At /ui/ in a browser: one notification per new item, once the person allowed them. Clicking
 * one brings the page forward on the Needs-you screen.
 */
export function useAttentionNotifications(): void {
  const api = useApi();
  const items = useQuery(attentionQuery(api)).data;
  const seen = useRef<Set<string>>(undefined);
  useEffect(() => {
    if (!items) return;
    const { fresh, seen: now } = newAttention(seen.current, items);
    seen.current = now;
    if (inElectron() || typeof Notification === 'undefined') return;
    if (Notification.permission !== 'granted') return;
    for (const item of fresh) {
      const { title, body } = attentionNotice(item);
      const notification = new Notification(title, { body, tag: attentionKey(item) });
      notification.onclick = () => {
        window.focus();
        location.hash = href.attention;
      };
    }
  }, [items]);
}
