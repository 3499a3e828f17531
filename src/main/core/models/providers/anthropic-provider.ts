import {
  ModelError,
  type ChatReply,
  type ChatRequest,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ProviderContext,
  type ReplyItem,
} from '../model-provider.js';
import {
  detail,
  firstEventThenRest,
  postForEvents,
  postJson,
  type ProviderEndpoint,
} from '../provider-http.js';
import { ActionReader, type Screen } from './anthropic-actions.js';
import { chatChunks, chatCompletion, inputTokens, messagesRequest } from './anthropic-chat.js';
import { anthropicConversation, screenOf } from './anthropic-messages.js';

const DEFAULT_BASE_URL = 'https://api.anthropic.com';
const API_VERSION = '2023-06-01';
const DEFAULT_MAX_TOKENS = 4096;

type Json = Record<string, unknown>;
type ComputerToolVersion = { type: string; beta: string };

const NEWER_TOOL: ComputerToolVersion = {
  type: 'computer_20251124',
  beta: 'computer-use-2025-11-24',
};
const OLDER_TOOL: ComputerToolVersion = {
  type: 'computer_20250124',
  beta: 'computer-use-2025-01-24',
};

/**
 * The computer tool a model takes. Anthropic documents computer_20251124 for Opus 4.5 and later
 * and Sonnet 4.6 and later, computer_20250124 for the models before them (Sonnet 4.5, Haiku 4.5,
 * Opus 4.1, the 4.0 and 3.7 models). A name that is not a Claude version ("my-proxy-model") gets
 * the newer tool: that is what models released from now on take.
 */
export function computerToolFor(model: string): ComputerToolVersion {
  const name = model.toLowerCase();
  if (/claude-\d/.test(name)) return OLDER_TOOL;
  const match = /claude-(opus|sonnet|haiku)-(\d+)(?:[-.](\d{1,2})(?!\d))?/.exec(name);
  if (!match) return NEWER_TOOL;
  const version = Number(match[2]) + Number(match[3] ?? 0) / 10;
  const first = match[1] === 'opus' ? 4.5 : 4.6;
  return version >= first ? NEWER_TOOL : OLDER_TOOL;
}

/**
 * Claude through Anthropic's Messages API with the computer-use tool (beta). Anthropic keeps no
 * conversation, so every call sends all of it, and the call ids are ours.
 */
export function createAnthropicProvider(context: ProviderContext): ModelProvider {
  const base = (context.config.base_url ?? DEFAULT_BASE_URL)
    .replace(/\/+$/, '')
    .replace(/\/v1$/, '');
  const model = context.config.model ?? context.name;

  function endpoint(beta: string | null): ProviderEndpoint {
    const key = context.apiKey;
    if (!key) {
      throw new ModelError(
        'auth',
        `no Anthropic API key for model "${context.name}"; ${context.keyHint}`,
      );
    }
    return {
      label: 'Anthropic',
      url: `${base}/v1/messages`,
      headers: {
        'x-api-key': key,
        'anthropic-version': API_VERSION,
        ...(beta && { 'anthropic-beta': beta }),
      },
      timeoutMs: context.timeoutMs,
      retries: context.retries,
      log: context.log,
      secrets: [key],
      authHint: context.keyHint,
    };
  }

  return {
    kind: 'anthropic',

    async respond(request: ModelRequest): Promise<ModelReply> {
      const tool = request.computer ? computerToolFor(model) : null;
      const target = endpoint(tool?.beta ?? null);
      const screen = request.computer ? screenOf(request.computer) : null;
      const body = await messagesBody(request, model, screen, tool);
      const answer = await postJson(target, body, request);
      return readReply(answer, new ActionReader(screen ?? NO_SCREEN, request.conversation), {
        computer: screen !== null,
        scrub: (text) => detail(target, text),
      });
    },

    async chat(request: ChatRequest): Promise<ChatReply> {
      const target = endpoint(null);
      const body = messagesRequest(request.body, model, DEFAULT_MAX_TOKENS);
      if (!request.body.stream) {
        const answer = await postJson(target, body, request);
        return { kind: 'json', completion: chatCompletion(checked(answer, target), model) };
      }
      const chunks = chatChunks(postForEvents(target, { ...body, stream: true }, request), model);
      // A refused key or a dead server fails the call itself, before the caller has answered its
      // client with a stream.
      return { kind: 'stream', chunks: await firstEventThenRest(chunks) };
    },
  };
}

const NO_SCREEN: Screen = { width: 1, height: 1, modelWidth: 1, modelHeight: 1 };

async function messagesBody(
  request: ModelRequest,
  model: string,
  screen: Screen | null,
  tool: ComputerToolVersion | null,
): Promise<Json> {
  const { system, messages } = await anthropicConversation(request, screen);
  const tools: Json[] = [];
  if (screen && tool) {
    tools.push({
      type: tool.type,
      name: 'computer',
      display_width_px: screen.modelWidth,
      display_height_px: screen.modelHeight,
    });
  }
  for (const fn of request.functions) {
    tools.push({
      name: fn.name,
      ...(fn.description && { description: fn.description }),
      input_schema: fn.parameters ?? { type: 'object', properties: {} },
    });
  }
  return {
    model,
    max_tokens: request.max_output_tokens ?? DEFAULT_MAX_TOKENS,
    ...(system && { system }),
    messages,
    ...(tools.length > 0 && { tools }),
    ...(request.temperature !== null && { temperature: request.temperature }),
    ...(request.top_p !== null && { top_p: request.top_p }),
  };
}

/** An answer that is an error object, though it came with a 200. */
function checked(answer: unknown, target: ProviderEndpoint): Json {
  const body = (answer ?? {}) as Json;
  if (body.type === 'error') {
    const error = (body.error ?? {}) as Json;
    const message = typeof error.message === 'string' ? error.message : JSON.stringify(body);
    throw new ModelError(
      'rejected',
      `Anthropic answered with an error: ${detail(target, message)}`,
    );
  }
  return body;
}

function readReply(
  answer: unknown,
  reader: ActionReader,
  options: { computer: boolean; scrub: (text: string) => string },
): ModelReply {
  const body = (answer ?? {}) as Json;
  if (body.type === 'error' || !Array.isArray(body.content)) {
    const error = (body.error ?? {}) as Json;
    const what = typeof error.message === 'string' ? error.message : JSON.stringify(answer);
    throw new ModelError(
      body.type === 'error' ? 'rejected' : 'bad_answer',
      `Anthropic answered ${body.type === 'error' ? 'with an error' : 'without a content list'}: ${options.scrub(what)}`,
    );
  }
  const output = (body.content as Json[]).flatMap((block) => replyItems(block, reader, options));
  if (body.stop_reason === 'refusal') {
    const said = output.flatMap((item) => (item.type === 'message' ? [item.text] : [])).join(' ');
    throw new ModelError(
      'rejected',
      `Claude declined to continue (stop_reason "refusal")${said ? `: ${options.scrub(said)}` : ''}`,
    );
  }
  const usage = (body.usage ?? {}) as Json;
  return {
    output,
    usage: {
      input_tokens: inputTokens(usage),
      output_tokens: Number(usage.output_tokens ?? 0),
      cached_tokens: Number(usage.cache_read_input_tokens ?? 0),
    },
  };
}

function replyItems(
  block: Json,
  reader: ActionReader,
  options: { computer: boolean },
): ReplyItem[] {
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' && block.text.trim()
        ? [{ type: 'message', text: block.text }]
        : [];
    case 'thinking':
      return typeof block.thinking === 'string' && block.thinking.trim()
        ? [{ type: 'reasoning', text: block.thinking }]
        : [];
    case 'tool_use':
      if (block.name === 'computer' && options.computer) {
        return reader.read(block.input).map((action) => ({ type: 'computer_call', action }));
      }
      return [
        {
          type: 'function_call',
          name: String(block.name),
          arguments: JSON.stringify(block.input ?? {}),
        },
      ];
    default:
      // redacted_thinking carries no text; other blocks belong to tools Benchtop never declares.
      return [];
  }
}
