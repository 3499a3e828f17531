import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AttentionItem } from '../../../shared/approvals.js';

export type WebhookSettings = { webhook_url: string | null; webhook_secret: string | null };

const TIMEOUT_MS = 5000;
const RETRY_AFTER_MS = 1000;

/** The x-benchtop-signature of a body: `sha256=` and the hex HMAC-SHA256 keyed by the secret. */
export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/**
 * POSTs each attention item to notifications.webhook_url as JSON, signed when a secret is set.
 * Never blocks what announced the item; a failed delivery is tried once more, then logged (the
 * log names the item and the error, never the secret).
 */
export class Webhook {
  private readonly deliveries = new Set<Promise<void>>();

  constructor(
    private readonly settings: () => WebhookSettings,
    private readonly log: (message: string) => void,
  ) {}

  send(org: string, item: AttentionItem): void {
    const { webhook_url: url, webhook_secret: secret } = this.settings();
    if (!url) return;
    const body = JSON.stringify({ organization: org, ...item });
    const delivery = this.deliver(url, body, secret, item).finally(() =>
      this.deliveries.delete(delivery),
    );
    this.deliveries.add(delivery);
  }

  /** Waits for deliveries under way (shutdown, tests). */
  async drain(): Promise<void> {
    await Promise.all(this.deliveries);
  }

  private async deliver(
    url: string,
    body: string,
    secret: string | null,
    { type, task_id, approval_id }: AttentionItem,
  ): Promise<void> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Benchtop-Webhook',
      ...(secret && { 'x-benchtop-signature': signature(body, secret) }),
    };
    let failure = '';
    for (let attempt = 0; attempt < 2; attempt++) {
      if (attempt > 0) await sleep(RETRY_AFTER_MS);
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
        await response.arrayBuffer().catch(() => {});
        if (response.ok) return;
        failure = `HTTP ${response.status}`;
      } catch (error) {
        failure = (error as Error).message;
      }
    }
    this.log(
      `the notifications webhook did not take the ${type} item (${approval_id ?? task_id ?? 'no task'}): ${failure}`,
    );
  }
}
