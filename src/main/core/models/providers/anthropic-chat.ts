import type { ChatCompletion, ChatCompletionBody } from '../../../../shared/responses.js';
import { invalidRequest } from '../../errors.js';
import { ModelError } from '../model-provider.js';
import type { AnthropicMessage, Block } from './anthropic-messages.js';

type Json = Record<string, unknown>;

/** OpenAI's names for why Anthropic stopped. */
const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** A chat-completions body as a Messages request (without `stream`). */
export function messagesRequest(body: ChatCompletionBody, model: string, maxTokens: number): Json {
  const system: string[] = [];
  const messages: AnthropicMessage[] = [];
  body.messages.forEach((message, index) => {
    const blocks = chatBlocks(message.content, `messages[${index}].content`);
    if (message.role === 'system' || message.role === 'developer') {
      system.push(...blocks.filter((block) => block.type === 'text').map((b) => b.text as string));
      return;
    }
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const content =
      message.role === 'tool' ? [{ type: 'text', text: `Tool result: ${textOf(blocks)}` }] : blocks;
    if (content.length === 0) return;
    const last = messages.at(-1);
    if (last?.role === role) last.content.push(...content);
    else messages.push({ role, content });
  });
  const stop = body.stop as unknown;
  return {
    model: body.model ?? model,
    max_tokens: body.max_tokens ?? (body.max_completion_tokens as number | undefined) ?? maxTokens,
    ...(system.length > 0 && { system: system.join('\n\n') }),
    messages,
    ...(body.temperature !== undefined && { temperature: body.temperature }),
    ...(body.top_p !== undefined && { top_p: body.top_p }),
    ...(stop !== undefined && stop !== null && { stop_sequences: [stop].flat() }),
  };
}

function chatBlocks(content: unknown, param: string): Block[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content.trim() ? [{ type: 'text', text: content }] : [];
  return (content as Json[]).flatMap((part, index): Block[] => {
    if (part.type === 'text' && typeof part.text === 'string') {
      return part.text.trim() ? [{ type: 'text', text: part.text }] : [];
    }
    if (part.type === 'image_url') return [imageBlock(part.image_url, `${param}[${index}]`)];
    throw invalidRequest(
      `content parts of type "${String(part.type)}" cannot be sent to an Anthropic model; use text or image_url`,
      `${param}[${index}].type`,
    );
  });
}

function imageBlock(imageUrl: unknown, param: string): Block {
  const url =
    typeof imageUrl === 'string' ? imageUrl : ((imageUrl as Json | undefined)?.url as unknown);
  if (typeof url !== 'string')
    throw invalidRequest('image_url.url is required', `${param}.image_url`);
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) {
    return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } };
  }
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw invalidRequest(
    'image_url must be a base64 data: URL or an http(s) URL',
    `${param}.image_url.url`,
  );
}

function textOf(blocks: Block[]): string {
  return blocks.flatMap((block) => (block.type === 'text' ? [block.text as string] : [])).join('');
}

/** A Messages answer as a chat completion. */
export function chatCompletion(answer: unknown, model: string): ChatCompletion {
  const body = answer as Json;
  if (!Array.isArray(body.content)) {
    throw new ModelError('bad_answer', 'Anthropic answered without a content list');
  }
  const usage = (body.usage ?? {}) as Json;
  const prompt = inputTokens(usage);
  const completion = Number(usage.output_tokens ?? 0);
  return {
    id: typeof body.id === 'string' ? body.id : `chatcmpl-${Date.now()}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === 'string' ? body.model : model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: textOf(body.content as Block[]) },
        finish_reason: finishReason(body.stop_reason),
      },
    ],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    },
  };
}

/**
 * Anthropic's stream events (message_start, content_block_delta, message_delta, message_stop) as
 * chat.completion.chunk objects; an `error` event fails the stream.
 */
export async function* chatChunks(
  events: AsyncIterable<Json>,
  model: string,
): AsyncGenerator<Json> {
  let id = `chatcmpl-${Date.now()}`;
  let name = model;
  let prompt = 0;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Json, finish: string | null, extra: Json = {}) => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model: name,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  for await (const event of events) {
    if (event.type === 'message_start') {
      const message = (event.message ?? {}) as Json;
      if (typeof message.id === 'string') id = message.id;
      if (typeof message.model === 'string') name = message.model;
      prompt = inputTokens((message.usage ?? {}) as Json);
      yield chunk({ role: 'assistant', content: '' }, null);
    } else if (event.type === 'content_block_delta') {
      const delta = (event.delta ?? {}) as Json;
      if (delta.type === 'text_delta') yield chunk({ content: delta.text }, null);
    } else if (event.type === 'message_delta') {
      const usage = (event.usage ?? {}) as Json;
      if (usage.input_tokens !== undefined) prompt = inputTokens(usage);
      const completion = Number(usage.output_tokens ?? 0);
      const finish = finishReason(((event.delta ?? {}) as Json).stop_reason);
      yield chunk({}, finish, {
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
        },
      });
    } else if (event.type === 'message_stop') {
      return;
    } else if (event.type === 'error') {
      const error = (event.error ?? {}) as Json;
      throw new ModelError(
        'rejected',
        `Anthropic broke off the answer: ${String(error.message ?? error.type)}`,
      );
    }
  }
}

/** Anthropic counts cached prompt tokens apart from the rest; they are input all the same. */
export function inputTokens(usage: Json): number {
  return (
    Number(usage.input_tokens ?? 0) +
    Number(usage.cache_creation_input_tokens ?? 0) +
    Number(usage.cache_read_input_tokens ?? 0)
  );
}

function finishReason(reason: unknown): string | null {
  if (typeof reason !== 'string') return null;
  return FINISH[reason] ?? 'stop';
}
