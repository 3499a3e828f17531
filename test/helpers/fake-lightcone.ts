import { startFakeUpstream, type FakeUpstream, type UpstreamReply } from './fake-upstream.js';

/** Bodies are `any`: the tests read the cloud's request fields directly. */
export type FakeLightcone = FakeUpstream<UpstreamReply, any>;

/** A stand-in for the Lightcone cloud (POST /v1/responses, /v1/chat/completions). */
export function startFakeLightcone(): Promise<FakeLightcone> {
  return startFakeUpstream({
    unanswered: { status: 500, json: { error: { message: 'fake-lightcone: no reply queued' } } },
  });
}
