import type { ChatCompletionBody } from '../../../shared/responses.js';
import { BenchtopError } from '../errors.js';
import { ModelError, type ChatReply } from './model-provider.js';
import type { ModelRegistry } from './model-registry.js';

/** POST /v1/chat/completions: the body goes to the provider of its model, in OpenAI's format. */
export class ChatService {
  constructor(private readonly models: ModelRegistry) {}

  async complete(body: ChatCompletionBody, signal: AbortSignal): Promise<ChatReply> {
    const { name, config, provider } = this.models.resolve(body.model);
    try {
      return await provider.chat({ body: { ...body, model: config.model ?? name }, signal });
    } catch (error) {
      throw toHttpError(error);
    }
  }
}

/**
 * A provider that failed is the gateway's problem: 504 when it was slow, 502 otherwise. A rate
 * limit still there after the tries again stays a 429, with the wait the provider asked for: the
 * client's SDK backs off as told, and its code sees a rate limit, not a broken gateway.
 */
export function toHttpError(error: unknown): unknown {
  if (!(error instanceof ModelError)) return error;
  if (error.kind === 'blocked') return new BenchtopError('model_blocked', error.message);
  if (error.upstream?.status === 429) {
    const ms = error.upstream.retryAfterMs;
    return new BenchtopError('rate_limited', error.message, {
      retryAfterSeconds: ms === undefined ? undefined : ms / 1000,
    });
  }
  return new BenchtopError(
    error.kind === 'timeout' ? 'model_timeout' : 'model_error',
    error.message,
  );
}
