import type { ComputerToolSpec, ModelReply, ReplyItem } from '../model-provider.js';
import {
  badAnswer,
  isActionName,
  toAction,
  type ActionArgs,
  type ActionContext,
} from './openai-compatible-actions.js';
import { parseCalls, type TextCall } from './openai-compatible-calls.js';

export type AnswerContext = { computer: ComputerToolSpec | null; who: string };
type Json = Record<string, unknown>;

/** Tool names that mean the computer: ours, and the one Qwen2.5-VL was trained on. */
const COMPUTER_NAMES = new Set(['computer', 'computer_use']);

/** A chat completion → reply items: tool calls, or an action written in the text, or a message. */
export function readCompletion(body: unknown, context: AnswerContext): ModelReply {
  const message = firstMessage(body, context);
  const output: ReplyItem[] = [];
  const reasoning = text(message.reasoning_content) ?? text(message.reasoning);
  if (reasoning?.trim()) output.push({ type: 'reasoning', text: reasoning.trim() });
  const content = contentText(message.content);
  const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as unknown[]) : [];
  if (calls.length) {
    // Text beside a tool call is the model thinking aloud, not its final word.
    const said = withoutLabel(content);
    if (said) output.push({ type: 'reasoning', text: said });
    output.push(...calls.map((call) => toolCall(call, context)));
  } else {
    output.push(...fromText(content, context));
  }
  if (!output.length) throw badAnswer(context, 'an empty message', body);
  return { output, usage: usage(body) };
}

function firstMessage(body: unknown, context: AnswerContext): Json {
  const choices = isObject(body) && Array.isArray(body.choices) ? body.choices : [];
  const message = isObject(choices[0]) ? choices[0].message : undefined;
  if (!isObject(message)) throw badAnswer(context, 'no choices[0].message', body);
  return message;
}

function usage(body: unknown): ModelReply['usage'] {
  const counts = isObject(body) && isObject(body.usage) ? body.usage : {};
  const count = (value: unknown) => (typeof value === 'number' ? value : 0);
  const details = isObject(counts.prompt_tokens_details) ? counts.prompt_tokens_details : {};
  return {
    input_tokens: count(counts.prompt_tokens),
    output_tokens: count(counts.completion_tokens),
    cached_tokens: count(details.cached_tokens),
  };
}

function toolCall(call: unknown, context: AnswerContext): ReplyItem {
  const fn = isObject(call) && isObject(call.function) ? call.function : undefined;
  const name = text(fn?.name);
  if (!fn || !name) throw badAnswer(context, 'a tool call without a function name', call);
  if (context.computer && COMPUTER_NAMES.has(name)) {
    return computerCall(jsonArguments(fn.arguments, context), context);
  }
  const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
  return { type: 'function_call', name, arguments: args };
}

/** Servers send arguments as JSON text (OpenAI) or, some of them, as an object. */
function jsonArguments(raw: unknown, context: AnswerContext): ActionArgs {
  let value: unknown = raw ?? {};
  if (typeof raw === 'string') {
    try {
      value = raw.trim() ? (JSON.parse(raw) as unknown) : {};
    } catch {
      throw badAnswer(context, 'computer tool arguments that are not JSON', raw);
    }
  }
  if (!isObject(value))
    throw badAnswer(context, 'computer tool arguments that are not an object', raw);
  return value;
}

function computerCall(args: ActionArgs, context: AnswerContext): ReplyItem {
  return { type: 'computer_call', action: toAction(args, actionContext(context)) };
}

function actionContext(context: AnswerContext): ActionContext {
  return { display: context.computer!, who: context.who };
}

/**
 * Plain text: `<think>` blocks and "Thought: …" become reasoning; "Action: …", a JSON action
 * (bare, fenced, or in `<tool_call>`), or a bare known call such as `click(start_box='(5,9)')`
 * become computer calls; anything else is a message.
 */
function fromText(content: string, context: AnswerContext): ReplyItem[] {
  const items: ReplyItem[] = [];
  const rest = content
    .replace(/<think>([\s\S]*?)<\/think>/g, (_match, thought: string) => {
      if (thought.trim()) items.push({ type: 'reasoning', text: thought.trim() });
      return '';
    })
    .trim();
  if (!rest) return items;
  if (!context.computer) return [...items, { type: 'message', text: rest }];
  const marker = /(^|\n)[ \t]*Action[ \t]*:/.exec(rest);
  if (marker) {
    const thought = withoutLabel(rest.slice(0, marker.index));
    if (thought) items.push({ type: 'reasoning', text: thought });
    const action = rest.slice(marker.index + marker[0].length).trim();
    const parsed = actionsIn(action, context, true);
    if (!parsed) throw badAnswer(context, 'an action Benchtop cannot read', action);
    return [...items, ...parsed];
  }
  return [...items, ...(actionsIn(rest, context, false) ?? [{ type: 'message', text: rest }])];
}

/** The actions a text holds, or null when it holds none. `strict`: the text is only an action. */
function actionsIn(source: string, context: AnswerContext, strict: boolean): ReplyItem[] | null {
  const found = findJson(source, strict);
  if (found) {
    const items = jsonActions(found.value, context);
    if (items) return found.before ? [{ type: 'reasoning', text: found.before }, ...items] : items;
  }
  const calls = parseCalls(source.replace(/^```\w*\s*|\s*```$/g, ''));
  if (!calls || (!strict && !calls.every((call) => isCallName(call.name)))) return null;
  return calls.map((call) => fromCall(call, context));
}

function findJson(source: string, strict: boolean): { value: unknown; before: string } | null {
  const wrapped = /<tool_call>\s*([\s\S]*?)\s*<\/tool_call>|```(?:json)?\s*([\s\S]*?)```/.exec(
    source,
  );
  let body = wrapped ? (wrapped[1] ?? wrapped[2] ?? '') : source;
  let before = wrapped ? source.slice(0, wrapped.index).trim() : '';
  if (!wrapped && !strict && !/^[[{]/.test(source.trim())) {
    // Prose, then the JSON action: the prose is the model's reasoning.
    const start = source.indexOf('{');
    if (start < 0) return null;
    before = source.slice(0, start).trim();
    body = source.slice(start, source.lastIndexOf('}') + 1);
  }
  try {
    return { value: JSON.parse(body.trim()), before: withoutLabel(before) };
  } catch {
    return null;
  }
}

function jsonActions(value: unknown, context: AnswerContext): ReplyItem[] | null {
  const list = Array.isArray(value) ? value : [value];
  if (!list.length || !list.every(isJsonAction)) return null;
  return list.map((entry: Json) => {
    const name = text(entry.name);
    if (name === undefined || !('arguments' in entry)) return computerCall(entry, context);
    if (COMPUTER_NAMES.has(name))
      return computerCall(jsonArguments(entry.arguments, context), context);
    const args = entry.arguments;
    return {
      type: 'function_call',
      name,
      arguments: typeof args === 'string' ? args : JSON.stringify(args),
    };
  });
}

function isJsonAction(entry: unknown): entry is Json {
  if (!isObject(entry)) return false;
  if (typeof entry.action === 'string') return true;
  if (typeof entry.name === 'string' && 'arguments' in entry) return true;
  return typeof entry.type === 'string' && isActionName(entry.type);
}

/** Loose text must look like a call a GUI model writes (lower case), not prose "Done (mostly)". */
function isCallName(name: string) {
  return name === name.toLowerCase() && (name === 'call_user' || isActionName(name));
}

/** A UI-TARS-style call → its action; `call_user()` is the model handing over to a person. */
function fromCall(call: TextCall, context: AnswerContext): ReplyItem {
  if (call.name === 'call_user') {
    const said = call.args.content ?? call.positional[0];
    return { type: 'message', text: said || 'The model asks for your help to go on.' };
  }
  const args: ActionArgs = { ...call.args, action: call.name };
  const positional = call.positional;
  if (positional.length && positional.every((value) => /^-?\d+(\.\d+)?$/.test(value))) {
    args.coordinate = positional.map(Number);
  } else if (positional.length) {
    args.content ??= positional[0];
    args.url ??= positional[0];
    args.keys ??= positional;
  }
  return computerCall(args, context);
}

/** "Thought: I will…" → "I will…". */
function withoutLabel(value: string): string {
  return value
    .trim()
    .replace(/^(Thought|Reflection|Action_Summary)[ \t]*:\s*/i, '')
    .trim();
}

/** `content` is a string, null, or (some servers) a list of text parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
