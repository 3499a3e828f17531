import { OUTPUT_ACTION_TYPES, type OutputAction } from '../../../../shared/responses.js';
import {
  dataUrl,
  type ComputerToolSpec,
  type ConversationItem,
  type FunctionToolSpec,
  type ImageData,
  type Part,
} from '../model-provider.js';

/** One chat-completions message, as sent. */
export type ChatMessage = { role: string; content: unknown; [field: string]: unknown };
type ContentPart =
  { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** The tool name the model calls to act on the computer. */
export const COMPUTER_TOOL = 'computer';

const LEFT_OUT = '(an earlier screenshot, left out)';
const IMAGE = '(an image, not shown)';
const AFTER_ACTION = 'Screenshot after the action:';
const SCREENSHOT_FOLLOWS = 'Done; the screenshot after it follows.';

/** The system message: the caller's instructions, then how the computer tool works. */
export function systemPrompt(instructions: string | null, computer: ComputerToolSpec | null) {
  const parts = [instructions?.trim(), computer && computerGuide(computer)].filter(Boolean);
  return parts.length ? parts.join('\n\n') : null;
}

function computerGuide({ width, height, environment }: ComputerToolSpec): string {
  return [
    `You operate a ${environment} computer through the \`${COMPUTER_TOOL}\` tool, one action per call; after each action you get a new screenshot.`,
    `The screen is ${width}x${height} pixels, but every coordinate you give is on a 0-999 grid on both axes: (0,0) is the top-left corner, (999,999) the bottom-right, x grows rightwards and y downwards.`,
    'Actions: click, double_click, triple_click, right_click, move, mouse_down, mouse_up (x, y; click takes an optional button); drag (from x, y to end_x, end_y); scroll (at x, y by scroll_x, scroll_y pixels, positive is right/down); type (text); keypress (keys, e.g. ["ctrl", "c"]); key_down, key_up (keys: one key); navigate (url); wait (ms); done (result: the task is finished), answer (result: the answer asked for), terminate (result: why you cannot go on).',
    'If you cannot call tools, answer with one JSON object instead, e.g. {"action": "click", "x": 500, "y": 300}.',
  ].join('\n');
}

/** The `computer` function tool: its arguments are the contract's action fields, 0–999 grid. */
export function computerTool(computer: ComputerToolSpec) {
  const grid = (what: string) => ({
    type: 'integer',
    minimum: 0,
    maximum: 999,
    description: `${what}, on the 0-999 grid`,
  });
  return {
    type: 'function',
    function: {
      name: COMPUTER_TOOL,
      description: `Act on the ${computer.environment} computer (screen ${computer.width}x${computer.height} pixels; coordinates are 0-999 on both axes).`,
      parameters: {
        type: 'object',
        properties: {
          action: { type: 'string', enum: [...OUTPUT_ACTION_TYPES] },
          x: grid('x'),
          y: grid('y'),
          end_x: grid('drag end x'),
          end_y: grid('drag end y'),
          scroll_x: { type: 'integer', description: 'pixels to scroll right (negative: left)' },
          scroll_y: { type: 'integer', description: 'pixels to scroll down (negative: up)' },
          button: { type: 'string', enum: ['left', 'right', 'middle', 'back', 'forward'] },
          keys: { type: 'array', items: { type: 'string' }, description: 'e.g. ["ctrl", "a"]' },
          text: { type: 'string', description: 'text to type' },
          url: { type: 'string' },
          ms: { type: 'integer', description: 'milliseconds to wait' },
          result: { type: 'string', description: 'for done, answer and terminate' },
        },
        required: ['action'],
      },
    },
  };
}

export function functionTools(functions: FunctionToolSpec[]) {
  return functions.map((fn) => ({
    type: 'function',
    function: {
      name: fn.name,
      ...(fn.description === undefined ? {} : { description: fn.description }),
      parameters: fn.parameters ?? { type: 'object', properties: {} },
    },
  }));
}

/**
 * The conversation as chat messages. Our calls become assistant tool calls (in `withTools` mode)
 * or the JSON action in text (for servers that take no tools). Screenshots after actions go in a
 * user message after the tool results, because many servers refuse images in tool messages.
 */
export function toChatMessages(
  conversation: ConversationItem[],
  computer: ComputerToolSpec | null,
  withTools: boolean,
  system: string | null,
): ChatMessage[] {
  const out = new MessageList();
  if (system) out.system(system);
  for (const item of conversation) {
    switch (item.type) {
      case 'message':
        out.message(item.role, item.content);
        break;
      case 'reasoning':
        out.assistant().text.push(item.text);
        break;
      case 'computer_call':
        out.call(item.call_id, COMPUTER_TOOL, JSON.stringify(toGrid(item.action, computer)));
        break;
      case 'function_call':
        out.call(item.call_id, item.name, item.arguments);
        break;
      case 'computer_call_output':
        out.result(item.call_id, SCREENSHOT_FOLLOWS, [
          textPart(AFTER_ACTION),
          imagePart(item.image),
        ]);
        break;
      case 'function_call_output':
        out.result(item.call_id, item.output, []);
        break;
    }
  }
  return out.finish(withTools);
}

type MessageItem = Extract<ConversationItem, { type: 'message' }>;
type Assistant = { text: string[]; calls: { id: string; name: string; arguments: string }[] };
type Entry =
  | { kind: 'assistant'; turn: Assistant }
  | { kind: 'user'; parts: ContentPart[] }
  | { kind: 'system'; text: string }
  | { kind: 'tool'; callId: string; output: string; show: ContentPart[] };

/** Builds the list, merging a turn's reasoning and calls into one assistant message. */
class MessageList {
  private readonly entries: Entry[] = [];
  private open: Assistant | null = null;

  assistant(): Assistant {
    if (!this.open) {
      this.open = { text: [], calls: [] };
      this.entries.push({ kind: 'assistant', turn: this.open });
    }
    return this.open;
  }

  call(id: string, name: string, args: string) {
    this.assistant().calls.push({ id, name, arguments: args });
  }

  message(role: MessageItem['role'], content: Part[]) {
    if (role === 'assistant') {
      this.assistant().text.push(plainText(content));
      return;
    }
    this.open = null;
    if (role === 'user') this.entries.push({ kind: 'user', parts: content.map(toContentPart) });
    else this.system(plainText(content));
  }

  /** Adjacent system texts become one: some chat templates take a single system message. */
  system(text: string) {
    const last = this.entries.at(-1);
    if (last?.kind === 'system') last.text += `\n\n${text}`;
    else this.entries.push({ kind: 'system', text });
  }

  /** A tool result: its text, and parts shown to the model in the user message after it. */
  result(callId: string, output: string, show: ContentPart[]) {
    this.open = null;
    this.entries.push({ kind: 'tool', callId, output, show });
  }

  finish(withTools: boolean): ChatMessage[] {
    const messages: ChatMessage[] = [];
    let shown: ContentPart[] = [];
    const flush = () => {
      if (shown.length) pushUser(messages, shown);
      shown = [];
    };
    for (const entry of this.entries) {
      if (entry.kind !== 'tool') flush();
      if (entry.kind === 'assistant') messages.push(assistantMessage(entry.turn, withTools));
      if (entry.kind === 'user') pushUser(messages, entry.parts);
      if (entry.kind === 'system') messages.push({ role: 'system', content: entry.text });
      if (entry.kind !== 'tool') continue;
      if (withTools) {
        messages.push({ role: 'tool', tool_call_id: entry.callId, content: entry.output });
      } else if (!entry.show.length) {
        shown.push(textPart(`Result of ${entry.callId}: ${entry.output}`));
      }
      shown.push(...entry.show);
    }
    flush();
    return messages;
  }
}

function assistantMessage(turn: Assistant, withTools: boolean): ChatMessage {
  if (!withTools) {
    const calls = turn.calls.map((call) =>
      call.name === COMPUTER_TOOL
        ? call.arguments
        : JSON.stringify({ name: call.name, arguments: call.arguments }),
    );
    return { role: 'assistant', content: [...turn.text, ...calls].join('\n') };
  }
  const message: ChatMessage = { role: 'assistant', content: turn.text.join('\n') || null };
  if (turn.calls.length) {
    message.tool_calls = turn.calls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return message;
}

/** Consecutive user content goes in one message: some chat templates insist on alternation. */
function pushUser(messages: ChatMessage[], parts: ContentPart[]) {
  const last = messages.at(-1);
  if (last?.role === 'user' && Array.isArray(last.content)) last.content.push(...parts);
  else messages.push({ role: 'user', content: [...parts] });
}

/** Pixels back to the 0–999 grid the model speaks, so its own history reads consistently. */
function toGrid(action: OutputAction, computer: ComputerToolSpec | null) {
  const { type, ...fields } = action;
  const args: Record<string, unknown> = { action: type, ...fields };
  if (!computer) return args;
  const scale = (value: number, size: number) =>
    size <= 1 ? 0 : Math.min(999, Math.max(0, Math.round((value * 999) / (size - 1))));
  for (const [field, size] of [
    ['x', computer.width],
    ['y', computer.height],
    ['end_x', computer.width],
    ['end_y', computer.height],
  ] as const) {
    const value = action[field];
    if (value !== undefined) args[field] = scale(value, size);
  }
  return args;
}

function toContentPart(part: Part): ContentPart {
  return part.type === 'text' ? textPart(part.text) : imagePart(part.image);
}

function textPart(text: string): ContentPart {
  return { type: 'text', text };
}

function imagePart(image: ImageData | null): ContentPart {
  if (!image) return textPart(LEFT_OUT);
  return {
    type: 'image_url',
    image_url: { url: dataUrl(image) },
  };
}

function plainText(content: Part[]): string {
  const describe = (part: Part) =>
    part.type === 'text' ? part.text : part.image ? IMAGE : LEFT_OUT;
  return content.map(describe).join('\n');
}
