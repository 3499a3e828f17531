import { z } from 'zod';

/**
 * What the official Lightcone SDKs send and expect, restated in this project's words (the SDKs
 * cannot be installed here): their identifying headers, the typed Responses models of the current
 * ones, and the loop their current examples run.
 */

/** Headers each SDK sends on every request. */
export const SDK_HEADERS = {
  /** `pip install tzafon` today. */
  currentPython: sdk('python', 'Lightcone/Python', '2.39.0'),
  /** The first Python release with the typed Responses models. */
  firstTypedPython: sdk('python', 'Lightcone/Python', '2.35.0'),
  lastUntypedPython: sdk('python', 'Lightcone/Python', '2.34.1'),
  /** The seed's Python SDK. */
  seedPython: sdk('python', 'Lightcone/Python', '2.31.0'),
  currentTypeScript: sdk('js', 'Lightcone/JS', '0.14.0'),
  firstTypedTypeScript: sdk('js', 'Lightcone/JS', '0.10.0'),
  /** The seed's TypeScript SDK. */
  seedTypeScript: sdk('js', 'Lightcone/JS', '0.7.0'),
  /** Another vendor's Stainless SDK pointed at /v1/responses: it reads pixels. */
  openAIPython: sdk('python', 'OpenAI/Python', '2.8.0'),
} as const;

/**
 * Every endpoint the current SDKs (Python 2.39, TypeScript 0.14) have a method for, as `METHOD
 * path` with `{…}` for ids. The seed SDKs' are a subset.
 */
export const SDK_ENDPOINTS = [
  'GET /computers',
  'POST /computers',
  'GET /computers/{id}',
  'DELETE /computers/{id}',
  'GET /computers/{id}/status',
  'POST /computers/{id}/keepalive',
  'GET /computers/{id}/events',
  'GET /computers/{id}/screencast',
  'GET /computers/{id}/ws',
  ...[
    'batch',
    'change-proxy',
    'click',
    'debug',
    'double-click',
    'drag',
    'exec',
    'exec/sync',
    'execute',
    'hotkey',
    'html',
    'key-down',
    'key-up',
    'mouse-down',
    'mouse-up',
    'navigate',
    'right-click',
    'screenshot',
    'scroll',
    'type',
    'viewport',
  ].map((action) => `POST /computers/{id}/${action}`),
  'GET /computers/{id}/tabs',
  'POST /computers/{id}/tabs',
  'POST /computers/{id}/tabs/{tab}/switch',
  'DELETE /computers/{id}/tabs/{tab}',
  'GET /v1/models',
  'POST /v1/chat/completions',
  'POST /v1/responses',
  'GET /v1/responses/{id}',
  'POST /v1/responses/{id}/cancel',
  'POST /agent/tasks',
  'POST /agent/tasks/stream',
  'GET /agent/tasks/{id}',
  'POST /agent/tasks/{id}/pause',
  'POST /agent/tasks/{id}/resume',
  'POST /agent/tasks/{id}/messages',
] as const;

function sdk(lang: string, agent: string, version: string): Record<string, string> {
  return {
    'user-agent': `${agent} ${version}`,
    'x-stainless-lang': lang,
    'x-stainless-package-version': version,
    'x-stainless-os': 'Linux',
    'x-stainless-arch': 'x64',
    'x-stainless-retry-count': '0',
  };
}

// ---- The current SDKs' typed Responses models (they accept extra fields on every model) ------

const Int = z.number().int();
const point = { x: Int, y: Int };
const Status = z.enum(['in_progress', 'completed', 'incomplete']);

/** Each computer action the typed SDKs have a model for, by the model's name. */
export const TYPED_ACTIONS = {
  ActionClick: z.looseObject({
    type: z.literal('click'),
    button: z.enum(['left', 'right', 'wheel', 'back', 'forward']),
    ...point,
  }),
  ActionDoubleClick: z.looseObject({ type: z.literal('double_click'), ...point }),
  ActionDrag: z.looseObject({ type: z.literal('drag'), path: z.array(z.looseObject(point)) }),
  ActionKeypress: z.looseObject({ type: z.literal('keypress'), keys: z.array(z.string()) }),
  ActionMove: z.looseObject({ type: z.literal('move'), ...point }),
  ActionScreenshot: z.looseObject({ type: z.literal('screenshot') }),
  ActionScroll: z.looseObject({
    type: z.literal('scroll'),
    scroll_x: Int,
    scroll_y: Int,
    ...point,
  }),
  ActionType: z.looseObject({ type: z.literal('type'), text: z.string() }),
  ActionWait: z.looseObject({ type: z.literal('wait') }),
  ActionPointAndType: z.looseObject({
    type: z.literal('point_and_type'),
    text: z.string(),
    ...point,
  }),
  ActionMouseDown: z.looseObject({ type: z.literal('mouse_down'), ...point }),
  ActionMouseUp: z.looseObject({ type: z.literal('mouse_up'), ...point }),
  ActionKeyDown: z.looseObject({ type: z.literal('key_down'), keys: z.array(z.string()) }),
  ActionKeyUp: z.looseObject({ type: z.literal('key_up'), keys: z.array(z.string()) }),
} as const;
type TypedActionName = keyof typeof TYPED_ACTIONS;

const TypedMessage = z.looseObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  status: Status,
  content: z.array(
    z.union([
      z.looseObject({
        type: z.literal('output_text'),
        text: z.string(),
        annotations: z.array(z.unknown()),
      }),
      z.looseObject({ type: z.literal('refusal'), refusal: z.string() }),
    ]),
  ),
});
const TypedFunctionCall = z.looseObject({
  type: z.literal('function_call'),
  arguments: z.string(),
  call_id: z.string(),
  name: z.string(),
  id: z.string().nullish(),
  status: Status.nullish(),
});
const TypedComputerCall = z.looseObject({
  id: z.string(),
  type: z.literal('computer_call'),
  call_id: z.string(),
  status: Status,
  pending_safety_checks: z.array(z.looseObject({ id: z.string() })),
  action: z.union(Object.values(TYPED_ACTIONS)),
});

/** ResponseCreateResponse: an item no typed model fits is kept as an untyped dict. */
export const TypedResponse = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  created_at: Int,
  model: z.string(),
  status: z.enum(['completed', 'failed', 'in_progress', 'incomplete', 'cancelled']),
  output: z.array(z.record(z.string(), z.unknown())),
  error: z.record(z.string(), z.unknown()).nullish(),
  tools: z.array(z.record(z.string(), z.unknown())).nullish(),
  usage: z.looseObject({ input_tokens: Int.optional(), output_tokens: Int.optional() }).nullish(),
});

/**
 * The model an output item parses as: "message", "function_call", "computer_call/<ActionName>",
 * or "untyped" (the SDK hands it over as a plain dict, as it does for reasoning items).
 */
export function typedModelOf(item: unknown): string {
  if (TypedMessage.safeParse(item).success) return 'message';
  if (TypedFunctionCall.safeParse(item).success) return 'function_call';
  if (!TypedComputerCall.safeParse(item).success) return 'untyped';
  const action = (item as { action: unknown }).action;
  const name = (Object.keys(TYPED_ACTIONS) as TypedActionName[]).find(
    (candidate) => TYPED_ACTIONS[candidate].safeParse(action).success,
  );
  return `computer_call/${name}`;
}

// ---- The loop of the current examples ---------------------------------------------------------

export type Tool = {
  type: 'computer_use';
  display_width: number;
  display_height: number;
  environment: string;
  coordinate_space?: string;
};

/** The function the current examples offer so the model can say it is finished. */
export const DONE_TOOL = {
  type: 'function',
  name: 'done',
  description: 'Call this when the task is complete.',
  parameters: { type: 'object', properties: { message: { type: 'string' } } },
};

const CONVERTED = { x: 'display_width', x1: 'display_width', x2: 'display_width' } as const;
const CONVERTED_Y = { y: 'display_height', y1: 'display_height', y2: 'display_height' } as const;

/**
 * A computer_call's action as the current examples turn it into a ComputerAction: point fields
 * from 0–999 to pixels with int(v / 1000 × display) (not a drag's path, not scroll amounts), and
 * keys given as "ctrl+a" or JSON-encoded lists flattened.
 */
export function exampleAction(
  action: Record<string, unknown>,
  tool: Tool,
): Record<string, unknown> {
  const out = { ...action };
  for (const [field, dimension] of Object.entries({ ...CONVERTED, ...CONVERTED_Y })) {
    const value = out[field];
    if (typeof value === 'number') out[field] = Math.trunc((value / 1000) * tool[dimension]);
  }
  if (typeof out.keys === 'string') out.keys = out.keys.split('+');
  else if (Array.isArray(out.keys)) out.keys = out.keys.flatMap((key: string) => jsonOr(key));
  return out;
}

function jsonOr(key: string): unknown[] {
  try {
    const parsed: unknown = JSON.parse(key);
    return Array.isArray(parsed) ? parsed : [parsed];
  } catch {
    return [key];
  }
}

export type OutputItem = Record<string, unknown> & { type?: string };

/** True when the model called the done function. */
export function calledDone(output: OutputItem[]): boolean {
  return output.some((item) => item.type === 'function_call' && item.name === 'done');
}

/** The computer calls of an answer, typed or not, as the examples collect them. */
export function computerCalls(
  output: OutputItem[],
): Array<{ callId: string; action: Record<string, unknown> }> {
  return output.flatMap((item) =>
    item.type === 'computer_call'
      ? [{ callId: item.call_id as string, action: item.action as Record<string, unknown> }]
      : [],
  );
}

export const TERMINAL_ACTIONS = new Set(['terminate', 'done', 'answer']);
