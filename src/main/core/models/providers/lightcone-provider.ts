import {
  ModelError,
  type ChatReply,
  type ChatRequest,
  type ComputerToolSpec,
  type ImageData,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ProviderContext,
  type ReplyItem,
} from '../model-provider.js';
import {
  detail,
  forwardChatCompletions,
  postJson,
  type ProviderEndpoint,
} from '../provider-http.js';
import { inputItems, type ResponsesWire } from '../wire/responses-wire.js';
import { fromCloudAction, toCloudAction } from './lightcone-actions.js';

type Raw = Record<string, unknown>;

const DEFAULT_BASE_URL = 'https://api.tzafon.ai';
const LABEL = 'the Lightcone cloud';
/** Upstream call ids the service can adopt as its own (its ids look the same). */
const CALL_ID = /^call_[A-Za-z0-9_-]{1,120}$/;
/**
 * Stands in for a left-out screenshot in a computer_call_output: the cloud pairs every call with
 * an image output, and a 1×1 grey pixel tells the model nothing rather than something false.
 */
const OMITTED_IMAGE: ImageData = {
  mediaType: 'image/png',
  base64:
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
};

/**
 * The Lightcone cloud's own Responses API with the user's cloud key: Northstar decides, the
 * computers stay on this machine. The cloud keeps the conversation, so a continued chain sends only
 * the new items with `previous_response_id`; images always travel as data URLs because the cloud
 * cannot reach this machine's screenshot URLs.
 */
export function createLightconeProvider(ctx: ProviderContext): ModelProvider {
  const model = ctx.config.model ?? ctx.name;

  function endpoint(path: string): ProviderEndpoint {
    const key = ctx.apiKey;
    if (!key) throw new ModelError('auth', `no API key for ${LABEL}; ${ctx.keyHint}`);
    // People paste the OpenAI-style base URL ending in /v1; the paths below carry their own.
    const base = (ctx.config.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '').replace(/\/v1$/, '');
    return {
      label: LABEL,
      url: `${base}${path}`,
      headers: { authorization: `Bearer ${key}` },
      timeoutMs: ctx.timeoutMs,
      retries: ctx.retries,
      log: ctx.log,
      secrets: [key],
      authHint: `use a valid Lightcone cloud key: ${ctx.keyHint}`,
    };
  }

  return {
    kind: 'lightcone',
    async respond(request: ModelRequest): Promise<ModelReply> {
      const target = endpoint('/v1/responses');
      const body = await postJson(target, requestBody(request, model), request);
      return toReply(body, request.computer, target.secrets);
    },
    async chat(request: ChatRequest): Promise<ChatReply> {
      return forwardChatCompletions(endpoint('/v1/chat/completions'), request.body, request);
    },
  };
}

// ---- Request ----------------------------------------------------------------------------------

function requestBody(request: ModelRequest, model: string): Raw {
  const state = request.continuation?.state;
  const previous = typeof state?.response_id === 'string' ? state.response_id : undefined;
  const items = previous ? request.continuation!.input : request.conversation;
  const tools: Raw[] = request.functions.map((fn) => ({ type: 'function', ...fn }));
  if (request.computer) {
    const { width, height, environment } = request.computer;
    tools.unshift({
      type: 'computer_use',
      display_width: width,
      display_height: height,
      environment,
    });
  }
  return {
    model,
    input: items.flatMap((item) => inputItems(cloudWire(request.computer), item)),
    ...(previous ? { previous_response_id: previous } : {}),
    ...(tools.length ? { tools } : {}),
    ...present('instructions', request.instructions),
    ...present('temperature', request.temperature),
    ...present('top_p', request.top_p),
    ...present('max_output_tokens', request.max_output_tokens),
  };
}

function present(field: string, value: unknown): Raw {
  return value === null || value === undefined ? {} : { [field]: value };
}

/**
 * The cloud's side of the Responses wire: messages typed, images in every role but the
 * assistant's, actions in its 0–999 space, and every call paired with an image output.
 */
function cloudWire(computer: ComputerToolSpec | null): ResponsesWire {
  return {
    imageRoles: new Set(['user', 'system', 'developer']),
    typedMessages: true,
    messageImageDetail: 'auto',
    screenshot: { type: 'input_image' },
    leftOutScreenshot: OMITTED_IMAGE,
    computerCallFields: (_callId, action) => ({
      action: computer ? toCloudAction(action, computer) : action,
    }),
  };
}

// ---- Reply ------------------------------------------------------------------------------------

function toReply(body: unknown, computer: ComputerToolSpec | null, secrets: string[]): ModelReply {
  const clean = (text: string) => detail({ secrets }, text);
  if (!isRecord(body)) throw badAnswer(`answered with ${clean(JSON.stringify(body))}`);
  const failure = failureOf(body);
  if (failure !== undefined) {
    throw new ModelError('rejected', `${LABEL} could not answer: ${clean(failure)}`);
  }
  if (!Array.isArray(body.output)) {
    throw badAnswer(`answered without an output list: ${clean(JSON.stringify(body))}`);
  }
  const pairs = body.output.flatMap((item) => toReplyItem(item, computer));
  const ids = pairs.filter((pair) => pair.call).map((pair) => pair.callId);
  // Without the cloud's own call ids the next turn cannot refer to these calls upstream; the
  // service then names them, and the next turn sends the whole conversation instead.
  const keepIds =
    ids.every((id) => id !== undefined && CALL_ID.test(id)) && new Set(ids).size === ids.length;
  const output = pairs.map(({ item, call, callId }) =>
    keepIds && call ? ({ ...item, call_id: callId } as ReplyItem) : item,
  );
  const usage = isRecord(body.usage) ? body.usage : {};
  const details = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  return {
    output,
    usage: {
      input_tokens: count(usage.input_tokens),
      output_tokens: count(usage.output_tokens),
      cached_tokens: count(details.cached_tokens),
    },
    ...(keepIds && typeof body.id === 'string' ? { state: { response_id: body.id } } : {}),
  };
}

function failureOf(body: Raw): string | undefined {
  const error = body.error;
  const message = isRecord(error) ? error.message : error;
  if (typeof message === 'string' && message) return message;
  if (body.status === 'failed') return 'the response failed without a message';
  return undefined;
}

/** An output item, and for calls (`call`) the cloud's id of it. */
type Pair = { item: ReplyItem; call?: true; callId?: string };

function toReplyItem(raw: unknown, computer: ComputerToolSpec | null): Pair[] {
  if (!isRecord(raw)) throw badAnswer(`answered with an output item that is not an object`);
  const callId = typeof raw.call_id === 'string' ? raw.call_id : undefined;
  switch (raw.type) {
    case 'message': {
      const text = blocks(raw.content, ['output_text', 'text', 'refusal'], '');
      return text ? [{ item: { type: 'message', text } }] : [];
    }
    case 'reasoning': {
      const text = blocks(raw.summary, null, '\n') || blocks(raw.content, null, '\n');
      return text ? [{ item: { type: 'reasoning', text } }] : [];
    }
    case 'computer_call':
      if (!computer) {
        throw badAnswer('returned a computer action, but this request has no computer tool');
      }
      return [
        {
          item: { type: 'computer_call', action: fromCloudAction(raw.action, computer) },
          call: true,
          callId,
        },
      ];
    case 'function_call':
      if (typeof raw.name !== 'string' || !raw.name) {
        throw badAnswer(`returned a function call without a name`);
      }
      return [
        {
          item: { type: 'function_call', name: raw.name, arguments: argumentsOf(raw.arguments) },
          call: true,
          callId,
        },
      ];
    default:
      // Items Benchtop has no use for (the cloud echoing computer_call_output, web search…).
      return [];
  }
}

/** The text of content blocks (of the given types, or any), joined. */
function blocks(value: unknown, types: string[] | null, separator: string): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  return value
    .filter(isRecord)
    .filter((block) => types === null || types.includes(block.type as string))
    .map((block) => [block.text, block.refusal].find((text) => typeof text === 'string') ?? '')
    .join(separator);
}

function argumentsOf(value: unknown): string {
  if (typeof value === 'string') return value || '{}';
  return JSON.stringify(value ?? {});
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.round(value)) : 0;
}

function badAnswer(what: string): ModelError {
  return new ModelError('bad_answer', `${LABEL} ${what}`);
}

function isRecord(value: unknown): value is Raw {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
