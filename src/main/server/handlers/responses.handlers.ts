import type { Request } from 'express';
import type { z } from 'zod';
import type {
  ClientResponseObject,
  ResponseObject,
  ResponseStreamEvent,
} from '../../../shared/responses.js';
import type { Core } from '../../core/create-core.js';
import { toHttpError } from '../../core/models/chat-service.js';
import {
  dialectFor,
  presentEvent,
  presentResponse as presentAny,
  readRequest,
  type ClientDialect,
} from '../../core/models/client-dialect.js';
import { computerToolOf, type ChatReply } from '../../core/models/model-provider.js';
import { isTypedLightconeSdk } from '../client-sdk.js';
import { keepWaiting } from '../keep-waiting.js';
import type { Handlers } from '../register-routes.js';
import { heartbeatMsOf, type SseStream } from '../sse.js';

type ResponseRouteName =
  | 'responses.create'
  | 'responses.get'
  | 'responses.delete'
  | 'responses.cancel'
  | 'models.list'
  | 'chat.completions';

/** A response in the client's dialect (its items' shapes are checked against the contract in tests). */
const presentResponse = (response: ResponseObject, dialect: ClientDialect) =>
  presentAny(response, dialect) as z.input<typeof ClientResponseObject>;

/** A stored response as this request's client reads it (its SDK, the tools it was made with). */
function presented(req: Request, response: ResponseObject) {
  return presentResponse(response, dialectFor(isTypedLightconeSdk(req.headers), response.tools));
}

export const responseHandlers = (core: Core): Pick<Handlers, ResponseRouteName> => ({
  'responses.create': async ({ body, principal, req, res, closed, openEvents }) => {
    const dialect = dialectFor(isTypedLightconeSdk(req.headers), body.tools);
    const request = readRequest(body, dialect);
    // A response nobody waits for any more is cancelled: the client that asked left (its
    // program ended), and a model call going on would be paid for, or keep a local model busy,
    // for an answer nobody reads. One in the background is meant to outlive its request.
    const signal = body.background ? undefined : closed;
    if (!body.stream) {
      // A model slower than the SDKs' timeout (a local one, a raised timeout_ms): kept alive, so
      // the SDK waits for this call instead of paying for it again. A model's failure is the
      // response's own (status failed); what else fails after the status line says so the same way.
      if (!body.background) {
        keepWaiting(res, (error) => ({
          object: 'response',
          status: 'failed',
          error: { code: error.code, message: error.message },
        }));
      }
      const started = await core.responses.create(principal.org, request, { signal });
      const response = body.background ? started.initial : await started.finished;
      return presentResponse(response, dialect);
    }
    // Events come only after create() has validated everything, so errors stay plain 4xx.
    const pending: ResponseStreamEvent[] = [];
    let deliver = (event: ResponseStreamEvent): void => void pending.push(event);
    const started = await core.responses.create(principal.org, request, {
      onEvent: (event) => deliver(event),
      signal,
    });
    const stream = openEvents();
    const display = computerToolOf(body.tools);
    const send = (event: ResponseStreamEvent) => stream.send(presentEvent(event, dialect, display));
    for (const event of pending) send(event);
    deliver = send;
    await started.finished;
    stream.end();
    return undefined;
  },
  'responses.get': ({ params, principal, req }) =>
    presented(req, core.responses.get(principal.org, params.id)),
  'responses.delete': ({ params, principal }) => core.responses.delete(principal.org, params.id),
  'responses.cancel': ({ params, principal, req }) =>
    presented(req, core.responses.cancel(principal.org, params.id)),

  'models.list': () => ({ object: 'list', data: core.models.list() }),
  'chat.completions': async ({ body, closed, req, res, openEvents }) => {
    // As a response: a slow model is waited for; a failure after the status line is the
    // failure a stream ends with.
    if (!body.stream) {
      keepWaiting(res, (error) => ({ error: { code: error.code, message: error.message } }));
    }
    // A stream opens when the model starts answering, so that a refused key or a dead server is
    // still a status; but a model slow to its first token (a local one on a CPU) would leave the
    // SDKs' read timeout to end the request first. After a heartbeat of silence it opens anyway,
    // its comments keep it alive, and a failure from then on is its last event.
    let stream: SseStream | undefined;
    const opening = body.stream
      ? setTimeout(() => {
          if (!closed.aborted) stream = openEvents();
        }, heartbeatMsOf(req))
      : undefined;
    let reply: ChatReply;
    try {
      reply = await core.chat.complete(body, closed);
    } catch (error) {
      if (!stream) throw error;
      endWithFailure(stream, error);
      return undefined;
    } finally {
      clearTimeout(opening);
    }
    // Only a request without `stream` is answered whole: providers stream every other.
    if (reply.kind === 'json') return reply.completion;
    stream ??= openEvents();
    try {
      for await (const chunk of reply.chunks) {
        if (stream.closed) break;
        stream.send(chunk);
      }
    } catch (error) {
      endWithFailure(stream, error);
      return undefined;
    }
    stream.end();
    return undefined;
  },
});

/** The headers are gone: the failure travels as a last event, as OpenAI's streams do. */
function endWithFailure(stream: SseStream, error: unknown): void {
  const failure = toHttpError(error) as { code?: string; message?: string };
  if (!stream.closed) {
    stream.send({ error: { code: failure.code ?? 'internal', message: failure.message } });
  }
  stream.end();
}
