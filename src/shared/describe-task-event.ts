import { describeModelAction } from './describe-action.js';
import {
  describeAsked,
  describeModelRetry,
  PAUSED_WORDS,
  STALL_WORDS,
} from './describe-attention.js';
import { NOT_RUN_PAUSED, type BudgetName, type TaskEvent } from './tasks.js';

/**
 * Who reads a task's timeline: the person in the window ("asks you"), or anyone the offline
 * bundle is handed to ("asks a person"). The rest of the wording is the same for both.
 */
export type TimelineReader = 'window' | 'bundle';

const READER_WORDS: Record<TimelineReader, { said: string; asks: string; handoff: string }> = {
  window: { said: 'you said', asks: 'asks you', handoff: 'asks for you' },
  bundle: { said: 'person said', asks: 'asks approval', handoff: 'asks a person' },
};

export const BUDGET_LABELS: Record<BudgetName, string> = {
  max_duration_seconds: 'Seconds of running',
  max_tokens: 'Tokens',
  max_cost_usd: 'Cost (USD)',
};

/** "$0.0123": cents are too coarse for a few model calls. */
export function dollars(amount: number): string {
  return `$${amount < 1 ? amount.toFixed(4) : amount.toFixed(2)}`;
}

/**
 * One line of a task's timeline: a short kind and what happened, or null for an event it leaves
 * out (a screenshot, an action that succeeded: the action's own line says what was done).
 */
export function describeTaskEvent(
  event: TaskEvent,
  reader: TimelineReader,
): { kind: string; text: string } | null {
  const words = READER_WORDS[reader];
  const line = (kind: string, text = '') => ({ kind, text });
  switch (event.type) {
    case 'started':
      return line('started', `on ${event.computer_id}, at most ${event.max_steps} steps`);
    case 'screenshot':
      return null;
    case 'reasoning':
      return line('thinks', event.text);
    case 'message':
      return line('says', event.text);
    case 'action':
      return line('does', describeModelAction(event.action));
    case 'healed':
      return line(
        'healed',
        `${describeModelAction(event.before)} → ${describeModelAction(event.after)} (${event.reason})`,
      );
    case 'action_result':
      if (event.status !== 'error') return null;
      if (event.error_message === NOT_RUN_PAUSED)
        return line('skipped', 'the task was paused first');
      return line('failed', event.error_message ?? 'error');
    case 'model_retry':
      return line('waits', describeModelRetry(event));
    // Who steered the task through the API, when the server says (a person in the window, an SDK).
    case 'user_message':
      return event.by
        ? line('message', `${event.text} (from ${event.by})`)
        : line(words.said, event.text);
    case 'paused':
      if (event.reason === 'user' && event.by) return line('paused', `paused by ${event.by}`);
      return line('paused', event.reason ? PAUSED_WORDS[event.reason] : '');
    case 'resumed':
    case 'cancelled':
      return line(event.type, event.by ? `by ${event.by}` : '');
    case 'approval_required': {
      const where = event.url ? `, on ${event.url}` : '';
      return line(words.asks, `${describeAsked(event)} (policy ${event.policy_id}${where})`);
    }
    case 'approval_decided':
      return line(
        event.status,
        [event.note && `“${event.note}”`, event.status_reason].filter(Boolean).join(' — ') ||
          (event.status === 'approved' ? 'the action ran' : ''),
      );
    case 'handoff_requested':
      return line(words.handoff, event.by ? `${event.reason} (from ${event.by})` : event.reason);
    case 'stalled':
      return line('stalled', [STALL_WORDS[event.reason], event.detail].filter(Boolean).join(': '));
    case 'budget_reached':
      return line('budget', budgetText(event.budget, event.limit, event.used));
    case 'completed':
      return line('completed', event.result ?? '');
    case 'failed':
      return line('failed', event.error);
    case 'max_steps':
      return line('stopped', 'reached max steps');
  }
}

function budgetText(budget: BudgetName, limit: number, used: number): string {
  const amount = (value: number) =>
    budget === 'max_cost_usd' ? dollars(value) : value.toLocaleString('en-US');
  return `${BUDGET_LABELS[budget]}: used ${amount(used)} of ${amount(limit)}`;
}
