import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';
import { providerFixture } from './provider-harness.js';

/** One canned answer: JSON, raw text (garbage), or an SSE stream; each may wait first. */
export type FakeReply =
  | { json: unknown; status?: number; delayMs?: number }
  | { text: string; status?: number; delayMs?: number }
  | { events: Array<{ event: string; data: unknown }>; delayMs?: number };

/** Its `url` is the base_url to configure: requests go to `${url}/v1/messages`. */
export type FakeAnthropic = FakeUpstream<FakeReply>;

/** A recorded Anthropic answer from test/fixtures/providers/anthropic, parsed afresh each time. */
export function anthropicFixture<T = Record<string, unknown>>(name: string): T {
  return providerFixture<T>('anthropic', name);
}

/** Anthropic's error body, as the real API sends it with an error status. */
export function anthropicError(status: number, type: string, message: string): FakeReply {
  return { status, json: { type: 'error', error: { type, message }, request_id: 'req_fake' } };
}

/** A stand-in for the Anthropic Messages API. */
export function startFakeAnthropic(): Promise<FakeAnthropic> {
  return startFakeUpstream({
    unanswered: anthropicError(500, 'api_error', 'the fake has no reply queued'),
  });
}
