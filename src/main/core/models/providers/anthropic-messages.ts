import sharp from 'sharp';
import type {
  ComputerToolSpec,
  ConversationItem,
  ImageData,
  ModelRequest,
  Part,
} from '../model-provider.js';
import { anthropicInput, type Screen } from './anthropic-actions.js';

export type Block = Record<string, unknown> & { type: string };
export type AnthropicMessage = { role: 'user' | 'assistant'; content: Block[] };

/** The API shrinks larger images to fit these (computer-use docs, "scaling"). */
const MAX_LONG_EDGE = 1568;
const MAX_PIXELS = 1_150_000;

const LEFT_OUT = 'An earlier screenshot, left out to save space.';
const NO_RESULT = 'No result was reported for this call.';

export function screenOf(tool: ComputerToolSpec): Screen {
  const { width, height } = tool;
  const factor = Math.min(
    1,
    MAX_LONG_EDGE / Math.max(width, height),
    Math.sqrt(MAX_PIXELS / (width * height)),
  );
  return {
    width,
    height,
    modelWidth: Math.max(1, Math.floor(width * factor)),
    modelHeight: Math.max(1, Math.floor(height * factor)),
  };
}

type CallForm = { tool: boolean; name: string };

/**
 * The conversation as Anthropic messages. Anthropic keeps no state, so every call sends it all:
 * system and developer text goes to `system`; our calls become tool_use blocks with our call ids
 * (they fit Anthropic's id pattern), their outputs tool_result blocks; same-role turns are
 * merged, since the API wants user and assistant to alternate. A call the tools cannot express
 * (navigate, a call with no tool declared now) is told in words instead. Reasoning is left out:
 * Anthropic takes thinking back only with its signature, which the conversation does not keep.
 */
export async function anthropicConversation(
  request: ModelRequest,
  screen: Screen | null,
): Promise<{ system: string; messages: AnthropicMessage[] }> {
  const tools = screen !== null || request.functions.length > 0;
  const calls = callForms(request.conversation, screen, tools);
  const system: string[] = request.instructions ? [request.instructions] : [];
  const turns: AnthropicMessage[] = [];
  const push = (role: AnthropicMessage['role'], content: Block[]) => {
    if (content.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  for (const item of request.conversation) {
    if (item.type === 'message' && (item.role === 'system' || item.role === 'developer')) {
      system.push(...item.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])));
    } else if (item.type !== 'reasoning') {
      const [role, blocks] = await translate(item, calls, screen);
      push(role, blocks);
    }
  }
  return {
    system: system.filter((text) => text.trim()).join('\n\n'),
    messages: pairResults(turns),
  };
}

function callForms(
  conversation: ConversationItem[],
  screen: Screen | null,
  tools: boolean,
): Map<string, CallForm> {
  const calls = new Map<string, CallForm>();
  for (const item of conversation) {
    if (item.type === 'computer_call') {
      const tool = screen !== null && anthropicInput(item.action, screen) !== null;
      calls.set(item.call_id, { tool, name: 'computer' });
    } else if (item.type === 'function_call') {
      calls.set(item.call_id, { tool: tools, name: item.name });
    }
  }
  return calls;
}

async function translate(
  item: Exclude<ConversationItem, { type: 'reasoning' }>,
  calls: Map<string, CallForm>,
  screen: Screen | null,
): Promise<[AnthropicMessage['role'], Block[]]> {
  switch (item.type) {
    case 'message': {
      const role = item.role === 'assistant' ? 'assistant' : 'user';
      const parts =
        role === 'assistant' ? item.content.filter((p) => p.type === 'text') : item.content;
      return [role, await Promise.all(parts.filter(hasContent).map((p) => partBlock(p, screen)))];
    }
    case 'computer_call': {
      const input = calls.get(item.call_id)?.tool ? anthropicInput(item.action, screen!) : null;
      if (input)
        return ['assistant', [{ type: 'tool_use', id: item.call_id, name: 'computer', input }]];
      return ['assistant', [text(`(Computer action performed: ${JSON.stringify(item.action)})`)]];
    }
    case 'function_call': {
      if (calls.get(item.call_id)?.tool) {
        const input = parseArguments(item.arguments);
        return ['assistant', [{ type: 'tool_use', id: item.call_id, name: item.name, input }]];
      }
      return ['assistant', [text(`(Called ${item.name} with ${item.arguments})`)]];
    }
    case 'computer_call_output': {
      const content = [await partBlock({ type: 'image', image: item.image }, screen)];
      return [
        'user',
        [result(item.call_id, calls, content, 'Screenshot after the computer action:')],
      ];
    }
    case 'function_call_output': {
      const name = calls.get(item.call_id)?.name ?? 'a function';
      const content = [text(item.output || '(empty)')];
      return ['user', [result(item.call_id, calls, content, `Result of ${name}:`)]];
    }
  }
}

/** A tool_result, or its content in words when its call went out as words too. */
function result(callId: string, calls: Map<string, CallForm>, content: Block[], intro: string) {
  if (calls.get(callId)?.tool) return { type: 'tool_result', tool_use_id: callId, content };
  return { type: 'words', content: [text(intro), ...content] };
}

/**
 * Anthropic wants each tool_use answered at the start of the very next user turn. Results are
 * moved first; a call left unanswered gets a short result; a result whose call is not in the turn
 * before is told in words. (`words` blocks are placeholders for that and are unpacked here.)
 */
function pairResults(turns: AnthropicMessage[]): AnthropicMessage[] {
  for (let index = 0; index < turns.length; index++) {
    const turn = turns[index]!;
    if (turn.role === 'assistant') {
      const next = turns[index + 1];
      if (turn.content.some((block) => block.type === 'tool_use') && !next) {
        turns.push({ role: 'user', content: [] });
      }
      continue;
    }
    const previous = turns[index - 1];
    const asked = (previous?.content ?? []).filter((block) => block.type === 'tool_use');
    const results: Block[] = [];
    const rest: Block[] = [];
    for (const block of turn.content) {
      if (block.type === 'tool_result' && asked.some((call) => call.id === block.tool_use_id)) {
        results.push(block);
      } else if (block.type === 'tool_result' || block.type === 'words') {
        rest.push(...(block.type === 'words' ? (block.content as Block[]) : inWords(block)));
      } else {
        rest.push(block);
      }
    }
    const ordered = asked.map(
      (call) =>
        results.find((block) => block.tool_use_id === call.id) ??
        ({ type: 'tool_result', tool_use_id: call.id, content: NO_RESULT } as Block),
    );
    turn.content = [...ordered, ...rest];
  }
  return turns;
}

function inWords(block: Block): Block[] {
  return [text('Result of an earlier call:'), ...(block.content as Block[])];
}

function hasContent(part: Part): boolean {
  return part.type === 'image' || part.text.trim() !== '';
}

async function partBlock(part: Part, screen: Screen | null): Promise<Block> {
  if (part.type === 'text') return text(part.text);
  if (!part.image) return text(LEFT_OUT);
  const image = await fitScreenshot(part.image, screen);
  return {
    type: 'image',
    source: { type: 'base64', media_type: image.mediaType, data: image.base64 },
  };
}

/** A screenshot of the whole display is sent at the size the tool declares to the model. */
async function fitScreenshot(image: ImageData, screen: Screen | null): Promise<ImageData> {
  if (!screen || (screen.modelWidth === screen.width && screen.modelHeight === screen.height)) {
    return image;
  }
  const bytes = Buffer.from(image.base64, 'base64');
  const { width, height } = await sharp(bytes)
    .metadata()
    .catch(() => ({ width: 0, height: 0 }));
  if (width !== screen.width || height !== screen.height) return image;
  const scaled = await sharp(bytes)
    .resize(screen.modelWidth, screen.modelHeight, { fit: 'fill' })
    .toBuffer();
  return { mediaType: image.mediaType, base64: scaled.toString('base64') };
}

function text(value: string): Block {
  return { type: 'text', text: value };
}

/** Anthropic's tool input must be an object; arguments that are not one are passed wrapped. */
function parseArguments(json: string): Record<string, unknown> {
  try {
    const value = JSON.parse(json) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
    return { value };
  } catch {
    return { arguments: json };
  }
}
