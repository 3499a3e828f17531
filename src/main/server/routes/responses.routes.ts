import {
  CreateResponseBody,
  CreateResponseDoc,
  ResponseDeleted,
  ResponseObject,
  ResponseStreamEvent,
} from '../../../shared/responses.js';
import type { Core } from '../../core/create-core.js';
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
      response: ResponseObject,
    },
    async ({ body, principal, req, res }) => {
      if (!body.stream) {
        const started = await core.responses.create(principal.org, body);
        return body.background ? started.initial : await started.finished;
      }
      // Events come only after create() has validated everything, so errors stay plain 4xx.
      const pending: ResponseStreamEvent[] = [];
      let deliver = (event: ResponseStreamEvent): void => void pending.push(event);
      const started = await core.responses.create(principal.org, body, {
        onEvent: (event) => deliver(event),
      });
      const stream = openSse(req, res);
      for (const event of pending) stream.send(event);
      deliver = (event) => stream.send(event);
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
      response: ResponseObject,
    },
    ({ params, principal }) => core.responses.get(principal.org, params.id!),
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
      response: ResponseObject,
    },
    ({ params, principal }) => core.responses.cancel(principal.org, params.id!),
  );
}
