import type { ModelRequest } from '../../src/main/core/models/model-provider.js';

/**
 * A first-turn ModelRequest as the Responses service builds one: the user says "Go" with a
 * 1280×720 browser computer, no functions and no sampling settings. Tests name the model and
 * override what they look at.
 */
export function modelRequest(fields: Pick<ModelRequest, 'model'> & Partial<ModelRequest>) {
  const request: ModelRequest = {
    instructions: null,
    conversation: [{ type: 'message', role: 'user', content: [{ type: 'text', text: 'Go' }] }],
    continuation: null,
    computer: { width: 1280, height: 720, environment: 'browser' },
    functions: [],
    temperature: null,
    top_p: null,
    max_output_tokens: null,
    conversationId: 'conv_1',
    turn: 0,
    signal: new AbortController().signal,
    ...fields,
  };
  return request;
}
