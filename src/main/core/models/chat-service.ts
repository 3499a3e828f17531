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

/** A provider that failed is the gateway's problem: 504 when it was slow, 502 otherwise. */
export function toHttpError(error: unknown): unknown {
  if (!(error instanceof ModelError)) return error;
  if (error.kind === 'blocked') return new BenchtopError('model_blocked', error.message);
  return new BenchtopError(
    error.kind === 'timeout' ? 'model_timeout' : 'model_error',
    error.message,
  );
}
