import {
  type CreateResponseBody,
  type InputItem,
  type ResponseObject,
  type ResponseStreamEvent,
} from '../../../shared/responses.js';
import { invalidRequest, notFound } from '../errors.js';
import { asStorageError } from '../storage-errors.js';
import { newId, now } from '../ids.js';
import type { ResponseStore, StoredResponse } from '../store/response-store.js';
import type { UsageLedger } from '../store/usage-ledger.js';
import { ConversationBuilder, earlierTurns } from './conversation.js';
import type { ImageResolver } from './image-resolver.js';
import {
  computerToolOf,
  imagesIn,
  ModelError,
  type ModelReply,
  type ProviderCall,
} from './model-provider.js';
import { costOf } from './pricing.js';
import type { ModelRegistry, ResolvedModel } from './model-registry.js';
import { callsOf, emitItem, toOutputItem, type Emit } from './output-items.js';

export type ResponseEventSink = (event: ResponseStreamEvent) => void;

export type CreateOptions = {
  /** Receives the stream events of the Responses API (docs/API.md §9) as the response runs. */
  onEvent?: ResponseEventSink;
  /** The computer the response is about, when known (agent tasks). */
  computerId?: string;
  /** Aborting it cancels the response, as cancel() does (a cancelled agent task). */
  signal?: AbortSignal;
  /** The agent task making the call, for its row in the usage ledger. */
  taskId?: string;
  /** Told before the provider is tried again after a rate limit or an overload. */
  onRetry?: ProviderCall['onRetry'];
};

export type Started = {
  /** The response as stored when it started: status in_progress. */
  initial: ResponseObject;
  /** Settles with the final response (completed, failed or cancelled); never rejects. */
  finished: Promise<ResponseObject>;
};

type Run = { stored: StoredResponse; controller: AbortController; ended: boolean };

/** What the ledger row of a run's model call needs besides the outcome. */
type CallFacts = { taskId: string | null; images: number };

/**
 * The Responses API (docs/API.md §9): conversation state, storage, streaming and cancel. Each
 * model call is delegated to the provider its model name maps to.
 */
export class ResponsesService {
  private readonly running = new Map<string, Run>();

  constructor(
    private readonly store: ResponseStore,
    private readonly models: ModelRegistry,
    private readonly images: ImageResolver,
    private readonly ledger: UsageLedger,
  ) {
    for (const stored of store.interrupted()) {
      stored.body.status = 'failed';
      stored.body.error = {
        code: 'interrupted',
        message: 'Benchtop stopped before this response finished; send the request again',
      };
      store.update(stored);
    }
  }

  async create(
    org: string,
    body: CreateResponseBody,
    options: CreateOptions = {},
  ): Promise<Started> {
    this.store.checkRoom(org);
    const model = this.models.resolve(body.model);
    const previous = body.previous_response_id
      ? this.previousOf(org, body.previous_response_id)
      : undefined;
    const input: InputItem[] =
      typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
    const openCalls = answerCalls(previous?.openCalls ?? [], input);
    const builder = new ConversationBuilder();
    for (const turn of previous ? this.store.chain(org, previous.body.id) : []) {
      builder.addTurn(turn.input, turn.body.output);
    }
    builder.addRequestInput(input);
    const { conversation, input: fresh } = await builder.build(this.images);

    const id = newId('resp');
    const computer = computerToolOf(body.tools);
    const stored: StoredResponse = {
      org,
      body: {
        id,
        object: 'response',
        created_at: now(),
        model: model.name,
        status: 'in_progress',
        output: [],
        usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
        computer_id: options.computerId ?? null,
        viewport: computer
          ? { environment: computer.environment, width: computer.width, height: computer.height }
          : null,
        instructions: body.instructions ?? null,
        max_output_tokens: body.max_output_tokens ?? null,
        temperature: body.temperature ?? null,
        top_p: body.top_p ?? null,
        previous_response_id: previous?.body.id ?? null,
        error: null,
        tools: body.tools ?? [],
      },
      input,
      conversationId: previous?.conversationId ?? id,
      // A client that keeps the history itself sends earlier turns as input, not as a chain.
      turn: Math.max(previous ? previous.turn + 1 : 0, earlierTurns(conversation)),
      state: null,
      openCalls,
    };
    try {
      this.store.insert(stored);
    } catch (error) {
      throw asStorageError('store the response', error);
    }
    const run: Run = { stored, controller: new AbortController(), ended: false };
    this.running.set(id, run);
    const emit = sequenced(options.onEvent);
    emit({ type: 'response.created', response: snapshot(stored) });
    emit({ type: 'response.in_progress', response: snapshot(stored) });

    const continuation =
      previous?.state && previous.body.model === model.name
        ? { state: previous.state, input: fresh }
        : null;
    const facts: CallFacts = {
      taskId: options.taskId ?? null,
      // What the provider sends: only the new items when it continues upstream state.
      images: imagesIn(continuation ? continuation.input : conversation),
    };
    const finished = this.run(run, model, emit, facts, () =>
      model.provider.respond({
        model: model.name,
        instructions: body.instructions ?? null,
        conversation,
        continuation,
        computer,
        functions: (body.tools ?? []).flatMap((tool) => (tool.type === 'function' ? [tool] : [])),
        temperature: body.temperature ?? null,
        top_p: body.top_p ?? null,
        max_output_tokens: body.max_output_tokens ?? null,
        conversationId: stored.conversationId,
        turn: stored.turn,
        signal: run.controller.signal,
        onRetry: options.onRetry,
      }),
    );
    this.cancelOnAbort(org, run, options.signal, finished);
    return { initial: snapshot(stored), finished };
  }

  private cancelOnAbort(
    org: string,
    run: Run,
    signal: AbortSignal | undefined,
    finished: Promise<unknown>,
  ): void {
    if (!signal) return;
    const cancel = () => {
      if (!run.ended && run.stored.body.status === 'in_progress')
        this.cancel(org, run.stored.body.id);
    };
    if (signal.aborted) return cancel();
    signal.addEventListener('abort', cancel, { once: true });
    void finished.finally(() => signal.removeEventListener('abort', cancel));
  }

  get(org: string, id: string): ResponseObject {
    return this.require(org, id).body;
  }

  cancel(org: string, id: string): ResponseObject {
    const stored = this.running.get(id)?.stored ?? this.require(org, id);
    if (stored.org !== org) throw notFound(`no response ${id}`);
    if (stored.body.status !== 'in_progress') {
      throw invalidRequest(
        `response ${id} is ${stored.body.status}; only an in_progress response can be cancelled`,
      );
    }
    this.end(id, (run) => {
      run.stored.body.status = 'cancelled';
      this.store.update(run.stored);
    });
    return snapshot(stored);
  }

  delete(org: string, id: string) {
    const run = this.running.get(id);
    if (!this.store.delete(org, id)) throw notFound(`no response ${id}`);
    if (run) this.end(id, () => {});
    return { id, object: 'response.deleted' as const, deleted: true as const };
  }

  /** Stops whatever still runs (shutdown): those responses stay in_progress and fail at next start. */
  close(): void {
    for (const run of this.running.values()) {
      run.ended = true;
      run.controller.abort(new Error('Benchtop is shutting down'));
    }
    this.running.clear();
  }

  private async run(
    run: Run,
    model: ResolvedModel,
    emit: Emit,
    facts: CallFacts,
    call: () => Promise<ModelReply>,
  ): Promise<ResponseObject> {
    const { stored } = run;
    let event: 'response.completed' | 'response.failed' | 'response.cancelled';
    const record = this.recorder(run, model, facts);
    try {
      const reply = await call();
      // Tokens of an answer that came after a cancel were spent all the same.
      record(reply.usage, null);
      if (run.ended) return this.settle(run, emit);
      const output = reply.output.map((item) => toOutputItem(item, model.name));
      output.forEach((item, index) => emitItem(emit, item, index));
      stored.body.output = output;
      stored.body.usage = {
        input_tokens: reply.usage.input_tokens,
        output_tokens: reply.usage.output_tokens,
        total_tokens: reply.usage.input_tokens + reply.usage.output_tokens,
      };
      stored.body.status = 'completed';
      stored.state = reply.state ?? null;
      stored.openCalls = [...stored.openCalls, ...callsOf(output)];
      event = 'response.completed';
    } catch (error) {
      record(null, run.ended ? 'cancelled' : describeFailure(error).code);
      if (run.ended) return this.settle(run, emit);
      stored.body.status = 'failed';
      stored.body.error = describeFailure(error);
      event = 'response.failed';
    }
    run.ended = true;
    this.running.delete(stored.body.id);
    try {
      this.store.update(stored);
    } catch (error) {
      // The answer exists only here: the caller learns it was not kept (nothing can continue
      // from it), and `finished` still settles, as a background response's caller never waits.
      stored.body.status = 'failed';
      stored.body.error = {
        code: 'internal',
        message: (asStorageError('store the response', error) as Error).message,
      };
      event = 'response.failed';
    }
    emit({ type: event, response: snapshot(stored) });
    return snapshot(stored);
  }

  /**
   * Writes the ledger row of the run's one model call. A failed call has no usage from the
   * provider, so its row says 0 tokens and the failure's code.
   */
  private recorder(run: Run, model: ResolvedModel, facts: CallFacts) {
    const at = now();
    const started = performance.now();
    let written = false;
    return (usage: ModelReply['usage'] | null, error: string | null) => {
      // Once: a failure after the answer came (its output unreadable) is still one call.
      if (written) return;
      written = true;
      const tokens = {
        input_tokens: usage?.input_tokens ?? 0,
        output_tokens: usage?.output_tokens ?? 0,
        cached_tokens: usage?.cached_tokens ?? 0,
      };
      try {
        this.ledger.record({
          org: run.stored.org,
          response_id: run.stored.body.id,
          task_id: facts.taskId,
          provider: model.config.provider,
          model: model.name,
          ...tokens,
          cost_usd: costOf(tokens, this.models.price(model.name)),
          latency_ms: Math.round(performance.now() - started),
          images: facts.images,
          error,
          at,
        });
      } catch {
        // A disk that refuses the row must not cost the caller the answer the model gave; the
        // response's own usage still says what it used.
      }
    };
  }

  /** The run was cancelled or deleted while the model worked: its answer is dropped. */
  private settle(run: Run, emit: Emit): ResponseObject {
    emit({ type: 'response.cancelled', response: snapshot(run.stored) });
    return snapshot(run.stored);
  }

  private end(id: string, record: (run: Run) => void): void {
    const run = this.running.get(id);
    if (!run || run.ended) return;
    run.ended = true;
    this.running.delete(id);
    // Stopped first, so the model call ends even when recording the end fails.
    run.controller.abort(new Error('cancelled'));
    record(run);
  }

  private previousOf(org: string, id: string): StoredResponse {
    const previous = this.running.get(id)?.stored ?? this.store.get(org, id);
    if (!previous || previous.org !== org) {
      throw notFound(
        `no response ${id} to continue (previous_response_id)`,
        'previous_response_id',
      );
    }
    if (previous.body.status === 'in_progress') {
      throw invalidRequest(
        `response ${id} is still in_progress; continue from it once it has finished`,
        'previous_response_id',
      );
    }
    return previous;
  }

  private require(org: string, id: string): StoredResponse {
    const stored = this.store.get(org, id);
    if (!stored) throw notFound(`no response ${id}`);
    return stored;
  }
}

/** The calls still open after this input: each output must answer an open call. */
function answerCalls(open: string[], input: InputItem[]): string[] {
  const calls = new Set(open);
  input.forEach((item, index) => {
    if (item.type === 'computer_call' || item.type === 'function_call') calls.add(item.call_id);
    if (item.type !== 'computer_call_output' && item.type !== 'function_call_output') return;
    if (!calls.has(item.call_id)) {
      const param = `input.${index}.call_id`;
      const known = calls.size ? `; open calls: ${[...calls].join(', ')}` : ' (it has none open)';
      throw invalidRequest(
        `${param} "${item.call_id}" is not an open call of this conversation${known}`,
        param,
      );
    }
    calls.delete(item.call_id);
  });
  return [...calls];
}

function describeFailure(error: unknown): { code: string; message: string } {
  if (error instanceof ModelError) return { code: `model_${error.kind}`, message: error.message };
  return {
    code: 'internal',
    message: `Benchtop failed while asking the model: ${(error as Error).message ?? String(error)}`,
  };
}

function sequenced(sink: ResponseEventSink | undefined) {
  let sequence = 0;
  return (event: Omit<ResponseStreamEvent, 'sequence_number'>) => {
    sink?.({ ...event, sequence_number: sequence++ } as ResponseStreamEvent);
  };
}

function snapshot(stored: StoredResponse): ResponseObject {
  return structuredClone(stored.body);
}
