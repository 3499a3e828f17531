import type { OutputAction } from '../../../../shared/responses.js';
import { dataUrl, type ConversationItem, type ImageData } from '../model-provider.js';

/**
 * The conversation as Responses-API input items, for the providers that speak that API (OpenAI
 * and the Lightcone cloud). The items have one shape; what differs between the providers is
 * passed in as a `ResponsesWire`.
 */

type Raw = Record<string, unknown>;
type Message = Extract<ConversationItem, { type: 'message' }>;
type Role = Message['role'];

export type ResponsesWire = {
  /** Roles whose messages carry images; the other roles' messages are sent as one text. */
  imageRoles: ReadonlySet<Role>;
  /** Whether message items say `type: 'message'`. */
  typedMessages: boolean;
  /** The `detail` of an image inside a message, when the provider wants one. */
  messageImageDetail?: 'auto';
  /** How a screenshot answering a computer call is sent. */
  screenshot: { type: 'computer_screenshot' | 'input_image'; detail?: 'original' };
  /** Stands in for a screenshot left out of a computer_call_output, when the provider takes one. */
  leftOutScreenshot?: ImageData;
  /**
   * The fields that carry a call's action, in the tool's coordinate space and call shape; null
   * when the provider's tool has no such action.
   */
  computerCallFields(callId: string, action: OutputAction): Raw | null;
};

export const LEFT_OUT = '(an earlier screenshot, left out to save space)';

/** One conversation item as it is: every item has a counterpart (reasoning is left out). */
export function inputItems(wire: ResponsesWire, item: ConversationItem): Raw[] {
  switch (item.type) {
    case 'message':
      return [messageItem(wire, item)];
    case 'reasoning':
      // Reasoning input items need the provider's own item ids, which the conversation does not
      // keep; earlier reasoning is not needed to decide the next step.
      return [];
    case 'computer_call': {
      const call = computerCallItem(wire, item.call_id, item.action);
      return call ? [call] : [];
    }
    case 'computer_call_output': {
      const image = item.image ?? wire.leftOutScreenshot;
      return image ? [computerOutputItem(wire, item.call_id, image)] : [];
    }
    case 'function_call':
      return [functionCallItem(item)];
    case 'function_call_output':
      return [functionOutputItem(item)];
  }
}

export function messageItem(wire: ResponsesWire, item: Message): Raw {
  const typed = wire.typedMessages ? { type: 'message' } : {};
  if (!wire.imageRoles.has(item.role)) {
    const text = item.content
      .map((part) => (part.type === 'text' ? part.text : LEFT_OUT))
      .join('\n');
    return { ...typed, role: item.role, content: text };
  }
  const detail = wire.messageImageDetail ? { detail: wire.messageImageDetail } : {};
  return {
    ...typed,
    role: item.role,
    content: item.content.map((part) => {
      if (part.type === 'text') return { type: 'input_text', text: part.text };
      if (!part.image) return { type: 'input_text', text: LEFT_OUT };
      return { type: 'input_image', image_url: dataUrl(part.image), ...detail };
    }),
  };
}

export function computerCallItem(
  wire: ResponsesWire,
  callId: string,
  action: OutputAction,
): Raw | null {
  const fields = wire.computerCallFields(callId, action);
  if (!fields) return null;
  return {
    type: 'computer_call',
    call_id: callId,
    status: 'completed',
    pending_safety_checks: [],
    ...fields,
  };
}

export function computerOutputItem(
  wire: ResponsesWire,
  callId: string,
  image: ImageData,
  acknowledged: unknown[] = [],
): Raw {
  return {
    type: 'computer_call_output',
    call_id: callId,
    output: { type: wire.screenshot.type, image_url: dataUrl(image), ...screenshotDetail(wire) },
    ...(acknowledged.length > 0 ? { acknowledged_safety_checks: acknowledged } : {}),
  };
}

export function functionCallItem(item: Extract<ConversationItem, { type: 'function_call' }>): Raw {
  return {
    type: 'function_call',
    call_id: item.call_id,
    name: item.name,
    arguments: item.arguments,
  };
}

export function functionOutputItem(
  item: Extract<ConversationItem, { type: 'function_call_output' }>,
): Raw {
  return { type: 'function_call_output', call_id: item.call_id, output: item.output };
}

/** The `detail` of a screenshot answering a call, as fields to spread. */
export function screenshotDetail(wire: ResponsesWire): { detail?: 'original' } {
  return wire.screenshot.detail ? { detail: wire.screenshot.detail } : {};
}
