import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream.js';

/** One canned answer: JSON, raw text (garbage), or an SSE stream; each may wait first. */
export type FakeReply =
  | { json: unknown; status?: number; delayMs?: number }
  | { text: string; status?: number; delayMs?: number }
  | { events: Array<{ event: string; data: unknown }>; delayMs?: number };

/** Its `url` is the base_url to configure: requests go to `${url}/v1/messages`. */
export type FakeAnthropic = FakeUpstream<FakeReply>;

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'providers', 'anthropic');

/** A recorded Anthropic answer from test/fixtures/providers/anthropic, parsed afresh each time. */
export function anthropicFixture<T = Record<string, unknown>>(name: string): T {
  return JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8')) as T;
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
