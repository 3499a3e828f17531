import { ChatCompletion, ChatCompletionBody, ModelList } from '../../../shared/responses.js';
import type { Core } from '../../core/create-core.js';
import { toHttpError } from '../../core/models/chat-service.js';
import type { Routes } from '../route-spec.js';
import { openSse } from '../sse.js';

export function modelRoutes(routes: Routes, core: Core): void {
  const tag = 'models';

  routes.add(
    {
      method: 'get',
      path: '/v1/models',
      tag,
      summary: 'Every configured model name and its provider',
      response: ModelList,
    },
    () => ({ object: 'list', data: core.models.list() }),
  );

  routes.add(
    {
      method: 'post',
      path: '/v1/chat/completions',
      tag,
      summary:
        'Forwarded to the provider of `model` in the OpenAI chat format; `stream` answers with SSE chunks',
      body: ChatCompletionBody,
      response: ChatCompletion,
    },
    async ({ body, req, res }) => {
      const abort = new AbortController();
      res.on('close', () => abort.abort(new Error('client went away')));
      const reply = await core.chat.complete(body, abort.signal);
      if (reply.kind === 'json') return reply.completion;
      const stream = openSse(req, res);
      try {
        for await (const chunk of reply.chunks) {
          if (stream.closed) break;
          stream.send(chunk);
        }
      } catch (error) {
        // Headers are gone: the failure travels as a last event, as OpenAI's streams do.
        const failure = toHttpError(error) as { code?: string; message?: string };
        if (!stream.closed) {
          stream.send({ error: { code: failure.code ?? 'internal', message: failure.message } });
        }
      }
      stream.end();
    },
  );
}
