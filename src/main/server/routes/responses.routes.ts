import {
  CreateResponseBody,
  CreateResponseDoc,
  ResponseDeleted,
  ClientResponseObject,
  type ResponseObject,
  ResponseStreamEvent,
} from '../../../shared/responses.js';
import type { Request } from 'express';
import type { Core } from '../../core/create-core.js';
import {
  dialectFor,
  presentEvent,
  presentResponse,
  readRequest,
} from '../../core/models/client-dialect.js';
import { computerToolOf } from '../../core/models/model-provider.js';
import { isTypedLightconeSdk } from '../client-sdk.js';
import type { Routes } from '../route-spec.js';
import { openSse } from '../sse.js';

export function responseRoutes(routes: Routes, core: Core): void {
  const tag = 'responses';

  routes.add(
    {
      method: 'post',
      path: '/v1/responses',
      tag,
      summary:
        'Ask a model for the next output items; `stream` answers with SSE events, `background` at once with in_progress',
      body: CreateResponseBody,
      bodyDoc: CreateResponseDoc,
      response: ClientResponseObject,
    },
    async ({ body, principal, req, res }) => {
      const dialect = dialectFor(isTypedLightconeSdk(req.headers), body.tools);
      const request = readRequest(body, dialect);
      if (!body.stream) {
        const started = await core.responses.create(principal.org, request);
        const response = body.background ? started.initial : await started.finished;
        return presentResponse(response, dialect);
      }
      // Events come only after create() has validated everything, so errors stay plain 4xx.
      const pending: ResponseStreamEvent[] = [];
      let deliver = (event: ResponseStreamEvent): void => void pending.push(event);
      const started = await core.responses.create(principal.org, request, {
        onEvent: (event) => deliver(event),
      });
      const stream = openSse(req, res);
      const display = computerToolOf(body.tools);
      const send = (event: ResponseStreamEvent) =>
        stream.send(presentEvent(event, dialect, display));
      for (const event of pending) send(event);
      deliver = send;
      await started.finished;
      stream.end();
    },
  );

  routes.add(
    {
      method: 'get',
      path: '/v1/responses/:id',
      tag,
      summary: 'A stored response',
      response: ClientResponseObject,
    },
    ({ params, principal, req }) => presented(req, core.responses.get(principal.org, params.id!)),
  );

  routes.add(
    {
      method: 'delete',
      path: '/v1/responses/:id',
      tag,
      summary: 'Delete a response for good',
      response: ResponseDeleted,
    },
    ({ params, principal }) => core.responses.delete(principal.org, params.id!),
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/responses/:id/cancel',
      tag,
      summary: 'Cancel an in_progress response',
      response: ClientResponseObject,
    },
    ({ params, principal, req }) =>
      presented(req, core.responses.cancel(principal.org, params.id!)),
  );
}

/** A stored response as this request's client reads it (its SDK, the tools it was made with). */
function presented(req: Request, response: ResponseObject) {
  return presentResponse(response, dialectFor(isTypedLightconeSdk(req.headers), response.tools));
}
