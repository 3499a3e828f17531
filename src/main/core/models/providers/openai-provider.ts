import {
  ModelError,
  type ComputerToolSpec,
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
import { fromOpenAIAction } from './openai-actions.js';
import {
  continuationInput,
  historyInput,
  readState,
  type OpenAIState,
  type ToolShape,
} from './openai-input.js';

const DEFAULT_BASE_URL = 'https://api.openai.com/v1';
const ENVIRONMENTS = new Set(['browser', 'mac', 'windows', 'ubuntu', 'linux']);

type Json = Record<string, unknown>;

/**
 * OpenAI's Responses API with its computer tool. `computer-use-preview` models get the preview
 * tool (display size and environment declared up front, one action per call); every other model
 * gets the GA `computer` tool (gpt-5.4 and later), whose calls may batch several actions.
 */
export function createOpenAIProvider(ctx: ProviderContext): ModelProvider {
  const base = (ctx.config.base_url ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const model = ctx.config.model ?? ctx.name;
  const endpoint = (path: string): ProviderEndpoint => {
    if (!ctx.apiKey) {
      throw new ModelError('auth', `no OpenAI API key for model "${ctx.name}"; ${ctx.keyHint}`);
    }
    return {
      label: 'OpenAI',
      url: `${base}${path}`,
      headers: { authorization: `Bearer ${ctx.apiKey}` },
      timeoutMs: ctx.timeoutMs,
      retries: ctx.retries,
      log: ctx.log,
      secrets: [ctx.apiKey],
      authHint: ctx.keyHint,
    };
  };
  return {
    kind: 'openai',
    async respond(request) {
      const target = endpoint('/responses');
      const answer = await postJson(target, responsesBody(request, model), request);
      return readReply(answer, request.computer, target);
    },
    async chat(request) {
      const body = { ...request.body, model };
      return forwardChatCompletions(endpoint('/chat/completions'), body, request);
    },
  };
}

function toolShape(model: string, computer: ComputerToolSpec | null): ToolShape {
  if (!computer) return null;
  return /computer-use-preview/i.test(model) ? 'preview' : 'ga';
}

function responsesBody(request: ModelRequest, model: string): Json {
  const shape = toolShape(model, request.computer);
  const state = readState(request.continuation?.state);
  const newInput =
    state && request.continuation
      ? continuationInput(request.continuation.input, state, shape)
      : null;
  const body: Json = { model, input: newInput ?? historyInput(request.conversation, shape) };
  if (newInput && state) body.previous_response_id = state.response_id;
  if (request.instructions !== null) body.instructions = request.instructions;
  const tools = [...computerTools(shape, request.computer), ...functionTools(request)];
  if (tools.length > 0) body.tools = tools;
  if (shape === 'preview') {
    // computer-use-preview refuses requests without truncation: 'auto'.
    body.truncation = 'auto';
    body.reasoning = { summary: 'concise' };
  } else if (shape === 'ga') {
    body.reasoning = { summary: 'auto' };
  }
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.top_p !== null) body.top_p = request.top_p;
  if (request.max_output_tokens !== null) body.max_output_tokens = request.max_output_tokens;
  return body;
}

function computerTools(shape: ToolShape, computer: ComputerToolSpec | null): Json[] {
  if (!shape || !computer) return [];
  // The GA tool takes no display size: it answers in pixels of the screenshot it is shown.
  if (shape === 'ga') return [{ type: 'computer' }];
  return [
    {
      type: 'computer_use_preview',
      display_width: computer.width,
      display_height: computer.height,
      environment: ENVIRONMENTS.has(computer.environment) ? computer.environment : 'linux',
    },
  ];
}

function functionTools(request: ModelRequest): Json[] {
  return request.functions.map((fn) => ({
    type: 'function',
    name: fn.name,
    description: fn.description,
    parameters: fn.parameters ?? { type: 'object', properties: {} },
    // Callers' schemas are written for any model, not to OpenAI's strict-mode rules.
    strict: false,
  }));
}

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readReply(
  answer: unknown,
  display: ComputerToolSpec | null,
  target: ProviderEndpoint,
): ModelReply {
  if (!isJson(answer)) {
    throw new ModelError('bad_answer', `OpenAI answered with something that is not a response`);
  }
  refuseFailures(answer, target);
  if (!Array.isArray(answer.output)) {
    throw new ModelError(
      'bad_answer',
      `OpenAI answered without an output list: ${detail(target, JSON.stringify(answer))}`,
    );
  }
  const state: OpenAIState | undefined =
    typeof answer.id === 'string' ? { response_id: answer.id } : undefined;
  const output = answer.output.flatMap((item) => replyItems(item, display, state));
  const usage = isJson(answer.usage) ? answer.usage : {};
  const details = isJson(usage.input_tokens_details) ? usage.input_tokens_details : {};
  return {
    output,
    usage: {
      input_tokens: count(usage.input_tokens),
      output_tokens: count(usage.output_tokens),
      cached_tokens: count(details.cached_tokens),
    },
    ...(state ? { state } : {}),
  };
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? Math.round(value) : 0;
}

/** A 200 answer can still be a failure: an `error` in the body, or a response cut short. */
function refuseFailures(answer: Json, target: ProviderEndpoint): void {
  if (answer.error !== null && answer.error !== undefined) {
    const error = answer.error;
    const text = isJson(error) && typeof error.message === 'string' ? error.message : error;
    const shown = typeof text === 'string' ? text : JSON.stringify(text);
    throw new ModelError('rejected', `OpenAI could not answer: ${detail(target, shown)}`);
  }
  if (answer.status === 'incomplete') {
    const details = isJson(answer.incomplete_details) ? answer.incomplete_details : {};
    const reason = typeof details.reason === 'string' ? details.reason : 'no reason given';
    const hint = reason === 'max_output_tokens' ? '; raise max_output_tokens' : '';
    throw new ModelError(
      'rejected',
      `OpenAI stopped before finishing the answer (${reason})${hint}`,
    );
  }
  if (answer.status !== undefined && answer.status !== 'completed') {
    throw new ModelError(
      'rejected',
      `OpenAI answered with status ${JSON.stringify(answer.status)}`,
    );
  }
}

function replyItems(item: unknown, display: ComputerToolSpec | null, state?: OpenAIState) {
  if (!isJson(item)) return [];
  switch (item.type) {
    case 'message':
      return messageItems(item);
    case 'reasoning':
      return reasoningItems(item);
    case 'function_call':
      return [functionCall(item)];
    case 'computer_call':
      return computerCalls(item, display, state);
    default:
      // Items of tools Benchtop never asks for (web search…) carry nothing for the client.
      return [];
  }
}

function messageItems(item: Json): ReplyItem[] {
  const parts = Array.isArray(item.content) ? item.content : [];
  const text = parts
    .filter(isJson)
    .map((part) => {
      if (part.type === 'output_text' && typeof part.text === 'string') return part.text;
      if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      return '';
    })
    .join('');
  return text ? [{ type: 'message', text }] : [];
}

function reasoningItems(item: Json): ReplyItem[] {
  const summary = Array.isArray(item.summary) ? item.summary : [];
  const text = summary
    .filter(isJson)
    .map((part) => (typeof part.text === 'string' ? part.text.trim() : ''))
    .filter(Boolean)
    .join('\n\n');
  return text ? [{ type: 'reasoning', text }] : [];
}

function functionCall(item: Json): ReplyItem {
  if (typeof item.call_id !== 'string' || typeof item.name !== 'string') {
    throw new ModelError('bad_answer', `OpenAI sent a function call without a call_id or name`);
  }
  const args = typeof item.arguments === 'string' ? item.arguments : '{}';
  return { type: 'function_call', call_id: item.call_id, name: item.name, arguments: args };
}

/**
 * A computer_call as one Benchtop call per action. The preview tool sends one `action`; the GA
 * tool a batch in `actions`, answered upstream by a single screenshot: the split calls get
 * derived ids, and the state maps them back to OpenAI's.
 */
function computerCalls(item: Json, display: ComputerToolSpec | null, state?: OpenAIState) {
  const callId = item.call_id;
  if (typeof callId !== 'string' || !callId) {
    throw new ModelError('bad_answer', 'OpenAI sent a computer call without a call_id');
  }
  const raw = Array.isArray(item.actions) ? item.actions : item.action ? [item.action] : null;
  if (!raw)
    throw new ModelError('bad_answer', `OpenAI sent computer call ${callId} with no action`);
  const actions = raw.flatMap((action) => fromOpenAIAction(action, display));
  if (actions.length === 0) actions.push({ type: 'wait', ms: 0 });
  const items: ReplyItem[] = safetyMessage(item, callId, state);
  actions.forEach((action, index) => {
    const id = actions.length === 1 ? callId : `${callId}.${index + 1}`;
    if (id !== callId && state) state.calls = { ...state.calls, [id]: callId };
    items.push({ type: 'computer_call', call_id: id, action });
  });
  return items;
}

/**
 * OpenAI flags some actions (a sensitive site, instructions found on screen) and wants them
 * acknowledged with the screenshot that answers them. The contract has no place for the checks,
 * so they are shown as a message before the call and acknowledged when the client answers it.
 */
function safetyMessage(item: Json, callId: string, state?: OpenAIState): ReplyItem[] {
  const checks = Array.isArray(item.pending_safety_checks)
    ? item.pending_safety_checks.filter(isJson)
    : [];
  if (checks.length === 0) return [];
  if (state) state.safety_checks = { ...state.safety_checks, [callId]: checks };
  const lines = checks.map((check) => {
    const message = typeof check.message === 'string' ? check.message : 'no details';
    return typeof check.code === 'string' ? `${check.code}: ${message}` : message;
  });
  return [{ type: 'message', text: `OpenAI safety check on the next action: ${lines.join('; ')}` }];
}
