import type { ConversationItem, ImageData, ProviderState } from '../model-provider.js';
import { toOpenAIAction, type OpenAIAction } from './openai-actions.js';

/** Which computer tool the request carries; it decides the shape of calls and screenshots. */
export type ToolShape = 'preview' | 'ga' | null;

/** What this provider keeps with a response to continue the conversation upstream. */
export type OpenAIState = {
  response_id: string;
  /** Benchtop call id → OpenAI call id, for calls split out of one batched computer_call. */
  calls?: Record<string, string>;
  /** OpenAI call id → the safety checks it flagged, acknowledged with that call's screenshot. */
  safety_checks?: Record<string, unknown[]>;
};

type Message = Extract<ConversationItem, { type: 'message' }>;

export function readState(state: ProviderState | undefined): OpenAIState | null {
  return state && typeof state.response_id === 'string' ? (state as OpenAIState) : null;
}

/**
 * This request's input for a conversation OpenAI already holds (previous_response_id): the new
 * items only. Null when they cannot be sent that way (a call OpenAI has not seen, a screenshot
 * left out), and the whole conversation goes instead.
 */
export function continuationInput(
  input: ConversationItem[],
  state: OpenAIState,
  shape: ToolShape,
): unknown[] | null {
  const items: unknown[] = [];
  // One screenshot answers a batched call: the last one, taken after all of its actions.
  const answered = new Map<string, number>();
  for (const item of input) {
    if (item.type === 'message') items.push(message(item));
    else if (item.type === 'function_call_output') items.push(functionOutput(item));
    else if (item.type === 'computer_call_output') {
      if (!item.image) return null;
      const callId = state.calls?.[item.call_id] ?? item.call_id;
      const checks = state.safety_checks?.[callId] ?? [];
      const entry = computerOutput(callId, item.image, shape, checks);
      const at = answered.get(callId);
      if (at === undefined) answered.set(callId, items.push(entry) - 1);
      else items[at] = entry;
    } else if (item.type !== 'reasoning') return null;
  }
  return items;
}

/**
 * The whole conversation as Responses input items. A call goes as a real computer_call or
 * function_call only when OpenAI can take it (an action its tool has, answered later in the
 * conversation with a screenshot or output); otherwise the call and its answer are told in
 * messages, which OpenAI always accepts. Reasoning is left out: OpenAI takes reasoning items back
 * only with the ids and encrypted content of its own, which a conversation carried by Benchtop
 * does not have.
 */
export function historyInput(conversation: ConversationItem[], shape: ToolShape): unknown[] {
  const screenshots = new Map<string, ImageData | null>();
  const results = new Set<string>();
  for (const item of conversation) {
    if (item.type === 'computer_call_output') screenshots.set(item.call_id, item.image);
    if (item.type === 'function_call_output') results.add(item.call_id);
  }
  const native = new Set<string>();
  return conversation.flatMap((item): unknown[] => {
    switch (item.type) {
      case 'message':
        return [message(item)];
      case 'reasoning':
        return [];
      case 'computer_call': {
        const action = toOpenAIAction(item.action);
        if (!action || !screenshots.get(item.call_id)) {
          return [told('assistant', `I did the computer action ${JSON.stringify(item.action)}.`)];
        }
        native.add(item.call_id);
        return [computerCall(item.call_id, action, shape)];
      }
      case 'computer_call_output':
        if (native.has(item.call_id) && item.image) {
          return [computerOutput(item.call_id, item.image, shape, [])];
        }
        return [screenshotMessage(item.image, shape)];
      case 'function_call':
        if (!results.has(item.call_id)) {
          return [told('assistant', `I called ${item.name} with ${item.arguments}.`)];
        }
        native.add(item.call_id);
        return [
          {
            type: 'function_call',
            call_id: item.call_id,
            name: item.name,
            arguments: item.arguments,
          },
        ];
      case 'function_call_output':
        if (native.has(item.call_id)) return [functionOutput(item)];
        return [told('user', `The function call ${item.call_id} returned: ${item.output}`)];
    }
  });
}

export function dataUrl(image: ImageData): string {
  return `data:${image.mediaType};base64,${image.base64}`;
}

const LEFT_OUT = '(an earlier screenshot, left out to save space)';

function message(item: Message): unknown {
  if (item.role !== 'user') {
    // OpenAI takes only text from the other roles (assistant content must be output text).
    const text = item.content
      .map((part) => (part.type === 'text' ? part.text : LEFT_OUT))
      .join('\n');
    return { role: item.role, content: text };
  }
  return {
    role: 'user',
    content: item.content.map((part) => {
      if (part.type === 'text') return { type: 'input_text', text: part.text };
      if (!part.image) return { type: 'input_text', text: LEFT_OUT };
      return { type: 'input_image', image_url: dataUrl(part.image) };
    }),
  };
}

function told(role: 'user' | 'assistant', text: string): unknown {
  return { role, content: text };
}

function screenshotMessage(image: ImageData | null, shape: ToolShape): unknown {
  if (!image) return told('user', '(the screenshot after that action was left out to save space)');
  return {
    role: 'user',
    content: [
      { type: 'input_text', text: 'The screen after that action:' },
      { type: 'input_image', image_url: dataUrl(image), ...detail(shape) },
    ],
  };
}

function computerCall(callId: string, action: OpenAIAction, shape: ToolShape): unknown {
  return {
    type: 'computer_call',
    // OpenAI wants an item id with its own prefix on every computer_call it is given back; the
    // call came from elsewhere (or from an earlier, stateless turn), so one is made from the call id.
    id: `cu_${callId.replace(/[^A-Za-z0-9]/g, '_')}`,
    call_id: callId,
    status: 'completed',
    pending_safety_checks: [],
    ...(shape === 'ga' ? { actions: [action] } : { action }),
  };
}

function computerOutput(
  callId: string,
  image: ImageData,
  shape: ToolShape,
  checks: unknown[],
): unknown {
  return {
    type: 'computer_call_output',
    call_id: callId,
    output: { type: 'computer_screenshot', image_url: dataUrl(image), ...detail(shape) },
    ...(checks.length > 0 ? { acknowledged_safety_checks: checks } : {}),
  };
}

function functionOutput(item: Extract<ConversationItem, { type: 'function_call_output' }>) {
  return { type: 'function_call_output', call_id: item.call_id, output: item.output };
}

/** The GA tool answers in pixels of the image it saw, so it must see the screenshot unscaled. */
function detail(shape: ToolShape): { detail?: 'original' } {
  return shape === 'ga' ? { detail: 'original' } : {};
}
