import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/** Its `url` is the base URL to configure, ending in /v1: requests go to `${url}/chat/completions`. */
export type FakeChatCompletions = FakeUpstream;

/** A fake OpenAI chat-completions server, as vLLM, Ollama or LM Studio serve it. */
export function startFakeChatCompletions(): Promise<FakeChatCompletions> {
  return startFakeUpstream({
    basePath: '/v1',
    unanswered: { status: 500, json: { error: { message: 'fake server: no reply queued' } } },
  });
}

/** A chat completion as vLLM answers it, around one assistant message. */
export function chatCompletion(
  message: Record<string, unknown>,
  usage = { prompt_tokens: 1200, completion_tokens: 30 },
) {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_735_000_000,
    model: 'fake-model',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, ...message },
        finish_reason: 'stop',
      },
    ],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}
