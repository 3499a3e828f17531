import {
  OutputAction,
  type OutputItem,
  type ResponseStreamEvent,
} from '../../../shared/responses.js';
import { newId } from '../ids.js';
import { ModelError, type ReplyItem } from './model-provider.js';

export type Emit = (event: Omit<ResponseStreamEvent, 'sequence_number'>) => void;

const CLICKS = new Set(['click', 'double_click', 'triple_click', 'mouse_down', 'mouse_up']);
const COORDINATES = ['x', 'y', 'end_x', 'end_y', 'scroll_x', 'scroll_y'] as const;

/** A provider's reply item in the contract's shape, with ids of its own. */
export function toOutputItem(item: ReplyItem, model: string): OutputItem {
  switch (item.type) {
    case 'reasoning':
      return {
        id: newId('rs'),
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: item.text }],
      };
    case 'message':
      return {
        id: newId('msg'),
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: item.text, annotations: [] }],
      };
    case 'computer_call':
      return {
        id: newId('cu'),
        type: 'computer_call',
        call_id: ownCallId(item.call_id),
        status: 'completed',
        pending_safety_checks: [],
        action: normalizeAction(item.action, model),
      };
    case 'function_call':
      return {
        id: newId('fc'),
        type: 'function_call',
        call_id: ownCallId(item.call_id),
        name: item.name,
        arguments: item.arguments,
        status: 'completed',
      };
  }
}

function ownCallId(callId: string | undefined): string {
  return callId && /^call_[A-Za-z0-9_.-]+$/.test(callId) ? callId : newId('call');
}

/** Integer pixels and a button on every click, whatever the provider sent. */
function normalizeAction(action: OutputAction, model: string): OutputAction {
  const normalized: Record<string, unknown> = { ...action };
  for (const key of COORDINATES) {
    if (typeof normalized[key] === 'number') normalized[key] = Math.round(normalized[key]);
  }
  if (action.type === 'right_click') normalized.button ??= 'right';
  else if (CLICKS.has(action.type)) normalized.button ??= 'left';
  const parsed = OutputAction.safeParse(normalized);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ModelError(
      'bad_answer',
      `model "${model}" answered an action Benchtop cannot perform (${issue.path.join('.')}: ${issue.message})`,
    );
  }
  return parsed.data;
}

export function callsOf(output: OutputItem[]): string[] {
  return output.flatMap((item) =>
    item.type === 'computer_call' || item.type === 'function_call' ? [item.call_id] : [],
  );
}

export function emitItem(emit: Emit, item: OutputItem, index: number): void {
  if (item.type !== 'message') {
    emit({ type: 'response.output_item.added', output_index: index, item });
    emit({ type: 'response.output_item.done', output_index: index, item });
    return;
  }
  emit({ type: 'response.output_item.added', output_index: index, item: { ...item, content: [] } });
  item.content.forEach((part, contentIndex) =>
    emit({
      type: 'response.output_text.delta',
      output_index: index,
      item_id: item.id,
      content_index: contentIndex,
      delta: part.text,
    }),
  );
  emit({ type: 'response.output_item.done', output_index: index, item });
}
