import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/** Its `url` ends in /v1 like OpenAI's base URL. */
export type FakeOpenAI = FakeUpstream;

/**
 * A stand-in for api.openai.com that speaks its wire format (POST /v1/responses,
 * /v1/chat/completions…).
 */
export function startFakeOpenAI(): Promise<FakeOpenAI> {
  return startFakeUpstream({
    basePath: '/v1',
    unanswered: {
      status: 500,
      json: { error: { message: 'fake-openai: no reply queued', type: 'server_error' } },
    },
  });
}
