import type {
  ChatCompletion,
  ChatCompletionBody,
  OutputAction,
  Tool,
} from '../../../shared/responses.js';
import type { ModelConfig } from '../config.js';
import type { ProviderState } from '../store/response-store.js';

/** An image ready to send to a model: the bytes, base64, with their media type. */
export type ImageData = { mediaType: string; base64: string };

/** The image as a `data:` URL, the way every provider takes inline images. */
export function dataUrl(image: ImageData): string {
  return `data:${image.mediaType};base64,${image.base64}`;
}

/**
 * A part of a message. `image: null` is an earlier screenshot left out of this turn (only the
 * newest few images of a conversation are sent); a provider says so in text.
 */
export type Part = { type: 'text'; text: string } | { type: 'image'; image: ImageData | null };

/** The conversation as providers see it: resolved images, pixel coordinates, our call ids. */
export type ConversationItem =
  | { type: 'message'; role: 'user' | 'assistant' | 'system' | 'developer'; content: Part[] }
  | { type: 'reasoning'; text: string }
  | { type: 'computer_call'; call_id: string; action: OutputAction }
  | { type: 'computer_call_output'; call_id: string; image: ImageData | null }
  | { type: 'function_call'; call_id: string; name: string; arguments: string }
  | { type: 'function_call_output'; call_id: string; output: string };

/** Images a provider sends with these items: the ones left out of the turn (null) are not. */
export function imagesIn(items: readonly ConversationItem[]): number {
  let count = 0;
  for (const item of items) {
    if (item.type === 'computer_call_output' && item.image) count++;
    if (item.type === 'message') {
      count += item.content.filter((part) => part.type === 'image' && part.image).length;
    }
  }
  return count;
}

export type ComputerToolSpec = { width: number; height: number; environment: string };

/** The request's computer-use tool (its display, which coordinates are relative to), if any. */
export function computerToolOf(tools: readonly Tool[] | undefined): ComputerToolSpec | null {
  for (const tool of tools ?? []) {
    if (tool.type === 'function') continue;
    return {
      width: tool.display_width,
      height: tool.display_height,
      environment: tool.environment,
    };
  }
  return null;
}
export type FunctionToolSpec = { name: string; description?: string; parameters?: unknown };

/** Provider-private state kept with a response (say, the upstream response id); the store's type. */
export type { ProviderState };

export type ModelRequest = {
  /** The Benchtop model name the caller asked for. */
  model: string;
  instructions: string | null;
  /** Everything so far, oldest first, ending with this request's input. */
  conversation: ConversationItem[];
  /**
   * Set when the previous response of the chain was answered by this same provider and left
   * state: that state, and the items that came after it (this request's input). A provider that
   * keeps conversations upstream sends only `input`; the others ignore it.
   */
  continuation: { state: ProviderState; input: ConversationItem[] } | null;
  /** The computer-use tool, when the request switched computer-use mode on. */
  computer: ComputerToolSpec | null;
  functions: FunctionToolSpec[];
  temperature: number | null;
  top_p: number | null;
  max_output_tokens: number | null;
  /** Identifies the conversation (a chain of responses) and this call's place in it, from 0. */
  conversationId: string;
  turn: number;
} & ProviderCall;

/** A provider call's cancel signal, and who hears of each try again. */
export type ProviderCall = {
  signal: AbortSignal;
  /** Told before each wait to try again (a rate limit, an overload); no secret in it. */
  onRetry?: (retry: ModelRetry) => void;
};

/** A call about to be tried again: what failed, the wait, and which try comes next of how many. */
export type ModelRetry = { error: string; wait_ms: number; attempt: number; attempts: number };

/** One output item in provider-neutral form; the service gives it ids and the contract's shape. */
export type ReplyItem =
  | { type: 'reasoning'; text: string }
  | { type: 'message'; text: string }
  | { type: 'computer_call'; call_id?: string; action: OutputAction }
  | { type: 'function_call'; call_id?: string; name: string; arguments: string };

export type ModelReply = {
  output: ReplyItem[];
  /** As the provider reported them; cached_tokens is the part of input_tokens read from its cache. */
  usage: { input_tokens: number; output_tokens: number; cached_tokens?: number };
  state?: ProviderState;
};

export type ChatReply =
  | { kind: 'json'; completion: ChatCompletion }
  | {
      kind: 'stream';
      chunks: AsyncIterable<Record<string, unknown>> | Iterable<Record<string, unknown>>;
    };

export type ChatRequest = {
  /** The request body, `model` already set to the upstream model name. */
  body: ChatCompletionBody;
} & ProviderCall;

/** What a provider is built from: one `models.providers` entry, its key resolved. */
export type ProviderContext = {
  /** The Benchtop model name (the key in `models.providers`). */
  name: string;
  config: ModelConfig;
  /** From `api_key`, else the variable `api_key_env` names (or the provider's usual one). */
  apiKey: string | undefined;
  /** Where the key comes from, for messages: "set OPENAI_API_KEY". */
  keyHint: string;
  /** Per-call limit: `timeout_ms`, default DEFAULT_MODEL_TIMEOUT_MS (settings). */
  timeoutMs: number;
  /** Tries after a transient failure: `max_retries`, default DEFAULT_MODEL_RETRIES (settings). */
  retries: number;
  /** Benchtop's log: a call tried again says why and when. */
  log?: (message: string) => void;
};

/** One model backend. Errors are ModelError, with a message a person can act on. */
export interface ModelProvider {
  readonly kind: string;
  respond(request: ModelRequest): Promise<ModelReply>;
  chat(request: ChatRequest): Promise<ChatReply>;
}

/** `blocked`: refused before any connection (models.local_only). */
export type ModelErrorKind =
  'unreachable' | 'timeout' | 'auth' | 'rejected' | 'bad_answer' | 'blocked';

/** A model call that did not give a usable answer. The message never contains a secret. */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    /** The provider's answer, when it answered with an error: its HTTP status and the wait it asked for. */
    readonly upstream?: { status: number; retryAfterMs?: number },
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

/** pixel = round(v × (size − 1) / 999), for models that answer in 0–999. */
export function scaleFrom999(value: number, size: number): number {
  const clamped = Math.min(999, Math.max(0, value));
  return Math.round((clamped * (size - 1)) / 999);
}
