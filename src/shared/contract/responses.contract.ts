import {
  ChatCompletion,
  ChatCompletionBody,
  ChatStreamEvent,
  ClientResponseObject,
  ClientResponseStreamEvent,
  CreateResponseBody,
  ModelList,
  ResponseDeleted,
} from '../responses.js';
import { IdParams, json, jsonOrEvents, route } from './route.js';

const tag = 'responses';

export const RESPONSE_ROUTES = {
  'responses.create': route({
    name: 'responses.create',
    method: 'post',
    path: '/v1/responses',
    body: CreateResponseBody,
    answer: jsonOrEvents(ClientResponseObject, ClientResponseStreamEvent),
    summary:
      'Ask a model for the next output items; `stream` answers with SSE events, `background` at once with in_progress',
    tag,
  }),
  'responses.get': route({
    name: 'responses.get',
    method: 'get',
    path: '/v1/responses/{id}',
    params: IdParams,
    answer: json(ClientResponseObject),
    summary: 'A stored response',
    tag,
  }),
  'responses.delete': route({
    name: 'responses.delete',
    method: 'delete',
    path: '/v1/responses/{id}',
    params: IdParams,
    answer: json(ResponseDeleted),
    summary: 'Delete a response for good',
    tag,
  }),
  'responses.cancel': route({
    name: 'responses.cancel',
    method: 'post',
    path: '/v1/responses/{id}/cancel',
    params: IdParams,
    answer: json(ClientResponseObject),
    summary: 'Cancel an in_progress response',
    tag,
  }),
  'models.list': route({
    name: 'models.list',
    method: 'get',
    path: '/v1/models',
    answer: json(ModelList),
    summary: 'Every configured model name and its provider',
    tag: 'models',
  }),
  'chat.completions': route({
    name: 'chat.completions',
    method: 'post',
    path: '/v1/chat/completions',
    body: ChatCompletionBody,
    answer: jsonOrEvents(ChatCompletion, ChatStreamEvent),
    summary:
      'Forwarded to the provider of `model` in the OpenAI chat format; `stream` answers with SSE chunks',
    tag: 'models',
  }),
} as const;
