import type { ConversationItem, ImageData, ProviderState } from '../model-provider.js';
import { dataUrl } from '../model-provider.js';
import {
  computerCallItem,
  computerOutputItem,
  functionCallItem,
  functionOutputItem,
  messageItem,
  screenshotDetail,
  type ResponsesWire,
} from '../wire/responses-wire.js';
import { toOpenAIAction } from './openai-actions.js';

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

/**
 * OpenAI's side of the Responses wire: only the user's messages carry images (assistant content
 * must be output text), and the GA tool answers in pixels of the image it saw, so it must see the
 * screenshot unscaled.
 */
function openAIWire(shape: ToolShape): ResponsesWire {
  return {
    imageRoles: new Set(['user']),
    typedMessages: false,
    screenshot: { type: 'computer_screenshot', ...(shape === 'ga' ? { detail: 'original' } : {}) },
    computerCallFields(callId, action) {
      const converted = toOpenAIAction(action);
      if (!converted) return null;
      return {
        // OpenAI wants an item id with its own prefix on every computer_call it is given back; the
        // call came from elsewhere (or from an earlier, stateless turn), so one is made from the
        // call id.
        id: `cu_${callId.replace(/[^A-Za-z0-9]/g, '_')}`,
        ...(shape === 'ga' ? { actions: [converted] } : { action: converted }),
      };
    },
  };
}

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
  const wire = openAIWire(shape);
  const items: unknown[] = [];
  // One screenshot answers a batched call: the last one, taken after all of its actions.
  const answered = new Map<string, number>();
  for (const item of input) {
    if (item.type === 'message') items.push(messageItem(wire, item));
    else if (item.type === 'function_call_output') items.push(functionOutputItem(item));
    else if (item.type === 'computer_call_output') {
      if (!item.image) return null;
      const callId = state.calls?.[item.call_id] ?? item.call_id;
      const checks = state.safety_checks?.[callId] ?? [];
      const entry = computerOutputItem(wire, callId, item.image, checks);
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
  const wire = openAIWire(shape);
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
        return [messageItem(wire, item)];
      case 'reasoning':
        return [];
      case 'computer_call': {
        const call = computerCallItem(wire, item.call_id, item.action);
        if (!call || !screenshots.get(item.call_id)) {
          return [told('assistant', `I did the computer action ${JSON.stringify(item.action)}.`)];
        }
        native.add(item.call_id);
        return [call];
      }
      case 'computer_call_output':
        if (native.has(item.call_id) && item.image) {
          return [computerOutputItem(wire, item.call_id, item.image)];
        }
        return [screenshotMessage(wire, item.image)];
      case 'function_call':
        if (!results.has(item.call_id)) {
          return [told('assistant', `I called ${item.name} with ${item.arguments}.`)];
        }
        native.add(item.call_id);
        return [functionCallItem(item)];
      case 'function_call_output':
        if (native.has(item.call_id)) return [functionOutputItem(item)];
        return [told('user', `The function call ${item.call_id} returned: ${item.output}`)];
    }
  });
}

function told(role: 'user' | 'assistant', text: string): unknown {
  return { role, content: text };
}

function screenshotMessage(wire: ResponsesWire, image: ImageData | null): unknown {
  if (!image) return told('user', '(the screenshot after that action was left out to save space)');
  return {
    role: 'user',
    content: [
      { type: 'input_text', text: 'The screen after that action:' },
      { type: 'input_image', image_url: dataUrl(image), ...screenshotDetail(wire) },
    ],
  };
}
