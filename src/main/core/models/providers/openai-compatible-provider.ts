import {
  ModelError,
  type ChatReply,
  type ChatRequest,
  type ModelProvider,
  type ModelReply,
  type ModelRequest,
  type ProviderContext,
} from '../model-provider.js';
import { forwardChatCompletions, postJson, type ProviderEndpoint } from '../provider-http.js';
import { readCompletion } from './openai-compatible-answers.js';
import {
  computerTool,
  functionTools,
  systemPrompt,
  toChatMessages,
} from './openai-compatible-messages.js';

/**
 * What servers say when they take no tools: vLLM without --enable-auto-tool-choice, Ollama
 * models without tool support, llama.cpp without --jinja.
 */
const NO_TOOLS = /tool.?choice|support(s|ed)? tools|tools? (param|are not|is not)|--jinja/i;

/**
 * A chat-completions server (vLLM, Ollama, LM Studio, llama.cpp…) serving a vision model. The
 * computer is one function tool speaking a 0–999 grid; models that answer in text instead
 * (UI-TARS and friends) are read from their text. A server that refuses tools is asked again,
 * and from then on, without them: the system prompt tells the model to answer in JSON then.
 */
export function createOpenAICompatibleProvider(ctx: ProviderContext): ModelProvider {
  const upstreamModel = ctx.config.model ?? ctx.name;
  const who = `model "${ctx.name}"`;
  let toolsRefused = false;

  async function ask(request: ModelRequest, withTools: boolean): Promise<unknown> {
    return postJson(endpointFor(ctx), requestBody(request, upstreamModel, withTools), request);
  }

  return {
    kind: 'openai-compatible',

    async respond(request: ModelRequest): Promise<ModelReply> {
      const hasTools = request.computer !== null || request.functions.length > 0;
      let answer: unknown;
      try {
        answer = await ask(request, hasTools && !toolsRefused);
      } catch (error) {
        const refusal =
          error instanceof ModelError && error.kind === 'rejected' && NO_TOOLS.test(error.message);
        if (!refusal || !hasTools || toolsRefused) throw error;
        toolsRefused = true;
        answer = await ask(request, false);
      }
      return readCompletion(answer, { computer: request.computer, who });
    },

    async chat(request: ChatRequest): Promise<ChatReply> {
      const body = { ...request.body, model: upstreamModel };
      return forwardChatCompletions(endpointFor(ctx), body, request);
    },
  };
}

function requestBody(request: ModelRequest, model: string, withTools: boolean) {
  const system = systemPrompt(request.instructions, request.computer);
  const body: Record<string, unknown> = {
    model,
    messages: toChatMessages(request.conversation, request.computer, withTools, system),
  };
  if (withTools) {
    const computer = request.computer ? [computerTool(request.computer)] : [];
    body.tools = [...computer, ...functionTools(request.functions)];
  }
  if (request.temperature !== null) body.temperature = request.temperature;
  if (request.top_p !== null) body.top_p = request.top_p;
  if (request.max_output_tokens !== null) body.max_tokens = request.max_output_tokens;
  return body;
}

/** Local servers usually need no key, so none is sent unless one is configured. */
function endpointFor(ctx: ProviderContext): ProviderEndpoint {
  const base = ctx.config.base_url;
  if (!base) {
    throw new ModelError(
      'rejected',
      `model "${ctx.name}" has no server address; set models.providers.${ctx.name}.base_url to its OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1`,
    );
  }
  return {
    label: `the server of model "${ctx.name}"`,
    url: `${base.replace(/\/+$/, '')}/chat/completions`,
    headers: ctx.apiKey ? { authorization: `Bearer ${ctx.apiKey}` } : {},
    timeoutMs: ctx.timeoutMs,
    retries: ctx.retries,
    log: ctx.log,
    secrets: ctx.apiKey ? [ctx.apiKey] : [],
    authHint: ctx.apiKey ? `check its key (${ctx.keyHint})` : `it wants an API key: ${ctx.keyHint}`,
  };
}
