import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { OutputAction, type ChatCompletion } from '../../../../shared/responses.js';
import { TURN_NOT_RUN } from '../../../../shared/tasks.js';
import {
  ModelError,
  type ChatReply,
  type ChatRequest,
  type ConversationItem,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ProviderContext,
  type ReplyItem,
} from '../model-provider.js';

const ScriptPoint = z.object({ x: z.number(), y: z.number() });

/** A computer_call's action: the contract's shape in pixels, or a drag given as a path. */
const ScriptAction = OutputAction.extend({
  x: z.number().optional(),
  y: z.number().optional(),
  end_x: z.number().optional(),
  end_y: z.number().optional(),
  path: z.array(ScriptPoint).min(2).optional(),
}).transform(({ path, ...action }): OutputAction => {
  if (!path || action.x !== undefined) return action;
  const [start, end] = [path[0]!, path.at(-1)!];
  return { ...action, x: start.x, y: start.y, end_x: end.x, end_y: end.y };
});

/**
 * One item of a turn: the short forms of the scripted format, or an output item exactly as a
 * response holds it (a message's content of output_text parts, a reasoning item's summary, a
 * function call's arguments as JSON text), so a stored response can be pasted as a turn. Ids and
 * call ids in pasted items are left behind: each run makes its own.
 */
const ScriptItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('computer_call'), action: ScriptAction }),
  z.object({
    type: z.literal('message'),
    text: z.string().optional(),
    content: z.array(z.looseObject({ text: z.string().optional() })).optional(),
  }),
  z.object({
    type: z.literal('reasoning'),
    text: z.string().optional(),
    summary: z.array(z.looseObject({ text: z.string() })).optional(),
  }),
  z.object({
    type: z.literal('function_call'),
    name: z.string().min(1),
    arguments: z.union([z.record(z.string(), z.unknown()), z.string()]).default({}),
  }),
]);
const Script = z.object({
  delay_ms: z.number().int().min(0).default(0),
  // A turn may be a whole response pasted as it is: only its output counts.
  turns: z.array(z.looseObject({ output: z.array(ScriptItem) })),
});
type Script = z.infer<typeof Script>;

const DONE: ReplyItem[] = [{ type: 'message', text: 'done' }];

/**
 * Turns from a JSON file, for tests, demos and replays: the Nth model call of a conversation gets
 * turn N, less the turns an agent task said it did not run (a person paused it first); after the
 * last turn every answer is the message "done". The file is read on every call, so a script can
 * be edited while Benchtop runs.
 */
export function createScriptedProvider(context: ProviderContext): ModelProvider {
  const path = context.config.script;

  async function load(): Promise<Script> {
    if (!path) {
      throw new ModelError(
        'rejected',
        `model "${context.name}" has no script; set models.providers.${context.name}.script to a JSON file`,
      );
    }
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      throw new ModelError('rejected', `cannot read the script ${path} (${code})`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new ModelError('bad_answer', `the script ${path} is not valid JSON`);
    }
    const result = Script.safeParse(parsed);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      throw new ModelError(
        'bad_answer',
        `the script ${path} is not a valid script: ${issue.path.join('.') || 'the file'}: ${issue.message}`,
      );
    }
    return result.data;
  }

  async function turn(index: number, signal: AbortSignal): Promise<ReplyItem[]> {
    const script = await load();
    if (script.delay_ms > 0) await sleep(script.delay_ms, undefined, { signal });
    const items = script.turns[index]?.output;
    if (!items) return DONE;
    return items.map(toReplyItem);
  }

  return {
    kind: 'scripted',
    async respond(request: ModelRequest): Promise<ModelReply> {
      // A turn a person's pause kept from running is given again, as a model told so would.
      const output = await turn(request.turn - turnsNotRun(request.conversation), request.signal);
      return {
        output,
        usage: {
          input_tokens: estimateTokens(request.conversation, request.instructions),
          output_tokens: Math.ceil(JSON.stringify(output).length / 4),
        },
      };
    },
    async chat(request: ChatRequest): Promise<ChatReply> {
      const position = request.body.messages.filter((m) => m.role === 'assistant').length;
      const items = await turn(position, request.signal);
      const text = items
        .map((item) => (item.type === 'message' || item.type === 'reasoning' ? item.text : ''))
        .filter(Boolean)
        .join('\n');
      const completion = chatCompletion(request.body.model ?? context.name, text);
      if (!request.body.stream) return { kind: 'json', completion };
      return { kind: 'stream', chunks: chunksOf(completion, text) };
    },
  };
}

/** How many of the conversation's turns an agent task did not run (it said so at the next call). */
function turnsNotRun(conversation: ConversationItem[]): number {
  return conversation.filter(
    (item) =>
      item.type === 'message' &&
      item.role === 'user' &&
      item.content.some((part) => part.type === 'text' && part.text === TURN_NOT_RUN),
  ).length;
}

function toReplyItem(item: z.infer<typeof ScriptItem>): ReplyItem {
  switch (item.type) {
    case 'computer_call':
      return { type: 'computer_call', action: item.action };
    case 'message':
      return { type: 'message', text: item.text ?? textOf(item.content ?? []) };
    case 'reasoning':
      return { type: 'reasoning', text: item.text ?? textOf(item.summary ?? [], '\n') };
    case 'function_call':
      return {
        type: 'function_call',
        name: item.name,
        arguments:
          typeof item.arguments === 'string' ? item.arguments : JSON.stringify(item.arguments),
      };
  }
}

function textOf(parts: Array<{ text?: string }>, separator = ''): string {
  return parts.map((part) => part.text ?? '').join(separator);
}

/** About four characters a token, and a screenshot's worth for each image. */
function estimateTokens(conversation: ConversationItem[], instructions: string | null): number {
  let characters = instructions?.length ?? 0;
  let images = 0;
  for (const item of conversation) {
    if (item.type === 'message') {
      for (const part of item.content) {
        if (part.type === 'text') characters += part.text.length;
        else images++;
      }
    } else if (item.type === 'computer_call_output') images++;
    else characters += JSON.stringify(item).length;
  }
  return Math.ceil(characters / 4) + images * 765;
}

function chatCompletion(model: string, text: string): ChatCompletion {
  return {
    id: `chatcmpl-scripted-${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  };
}

function* chunksOf(completion: ChatCompletion, text: string) {
  const base = {
    id: completion.id,
    object: 'chat.completion.chunk',
    created: completion.created,
    model: completion.model,
  };
  yield {
    ...base,
    choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
  };
  yield { ...base, choices: [{ index: 0, delta: { content: text }, finish_reason: null }] };
  yield { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };
}
