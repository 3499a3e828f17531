import { NOT_RUN_PAUSED, type TaskEvent } from '../../../shared/tasks.js';
import { describeModelAction as describeAction } from '../../../shared/describe-action.js';
import {
  describeAsked,
  describeModelRetry,
  PAUSED_WORDS,
  STALL_WORDS,
} from '../../../shared/describe-attention.js';
import { BUDGET_LABELS, dollars } from './budgets.js';

/** One line of the timeline: a short kind and what happened, or null for an event not shown. */
export function eventText(event: TaskEvent): { kind: string; text: string } | null {
  const line = (kind: string, text = '') => ({ kind, text });
  switch (event.type) {
    case 'started':
      return line('started', `on ${event.computer_id}, at most ${event.max_steps} steps`);
    case 'reasoning':
      return line('thinks', event.text);
    case 'message':
      return line('says', event.text);
    case 'action':
      return line('does', describeAction(event.action));
    case 'healed':
      return line(
        'healed',
        `${describeAction(event.before)} → ${describeAction(event.after)} (${event.reason})`,
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
        : line('you said', event.text);
    case 'paused':
      if (event.reason === 'user' && event.by) return line('paused', `paused by ${event.by}`);
      return line('paused', event.reason ? PAUSED_WORDS[event.reason] : '');
    case 'resumed':
    case 'cancelled':
      return line(event.type, event.by ? `by ${event.by}` : '');
    case 'approval_required':
      return line('asks you', describeAsked(event));
    case 'approval_decided':
      return line(
        event.status,
        [event.note && `“${event.note}”`, event.status_reason].filter(Boolean).join(' — '),
      );
    case 'handoff_requested':
      return line('asks for you', event.by ? `${event.reason} (from ${event.by})` : event.reason);
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
    default:
      return null;
  }
}

function budgetText(budget: keyof typeof BUDGET_LABELS, limit: number, used: number): string {
  const amount = (value: number) =>
    budget === 'max_cost_usd' ? dollars(value) : value.toLocaleString('en-US');
  return `${BUDGET_LABELS[budget]}: used ${amount(used)} of ${amount(limit)}`;
}
