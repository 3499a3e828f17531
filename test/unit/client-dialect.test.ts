import { describe, expect, it } from 'vitest';
import {
  CONTRACT_DIALECT,
  dialectFor,
  fromModelSpace,
  presentEvent,
  presentResponse,
  readRequest,
  toModelSpace,
} from '../../src/main/core/models/client-dialect.js';
import { describeClient, isTypedLightconeSdk } from '../../src/main/server/client-sdk.js';
import type { OutputAction, ResponseObject } from '../../src/shared/responses.js';
import {
  exampleAction,
  SDK_HEADERS,
  TypedResponse,
  typedModelOf,
  type Tool,
} from '../helpers/lightcone-clients.js';

const TOOL: Tool = {
  type: 'computer_use',
  display_width: 1280,
  display_height: 720,
  environment: 'desktop',
};
const TYPED = dialectFor(true);

function response(actions: OutputAction[], extra: Partial<ResponseObject> = {}): ResponseObject {
  return {
    id: 'resp_1',
    object: 'response',
    created_at: '2026-11-23T10:00:00.250Z',
    model: 'demo',
    status: 'completed',
    output: [
      { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'thinking' }] },
      ...actions.map((action, index) => ({
        id: `cu_${index}`,
        type: 'computer_call' as const,
        call_id: `call_${index}`,
        status: 'completed' as const,
        pending_safety_checks: [],
        action,
      })),
      {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'hi', annotations: [] }],
      },
    ],
    usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
    computer_id: null,
    viewport: { environment: 'desktop', width: 1280, height: 720 },
    instructions: null,
    max_output_tokens: null,
    temperature: null,
    top_p: null,
    previous_response_id: null,
    error: null,
    tools: [TOOL],
    ...extra,
  };
}

/** One action of every type /v1/responses emits, in pixels. */
const EVERY_ACTION: OutputAction[] = [
  { type: 'click', x: 200, y: 150, button: 'left' },
  { type: 'click', x: 200, y: 150, button: 'middle' },
  { type: 'double_click', x: 200, y: 150, button: 'left' },
  { type: 'triple_click', x: 200, y: 150, button: 'left' },
  { type: 'right_click', x: 200, y: 150, button: 'right' },
  { type: 'type', text: 'hello' },
  { type: 'type', text: 'hello', x: 550, y: 150 },
  { type: 'key', keys: ['ctrl', 'a'] },
  { type: 'keypress', keys: ['enter'] },
  { type: 'key_down', keys: ['shift'] },
  { type: 'key_up', keys: ['shift'] },
  { type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: 300 },
  { type: 'hscroll', x: 640, y: 360, scroll_x: 200, scroll_y: 0 },
  { type: 'navigate', url: 'https://example.com/' },
  { type: 'drag', x: 151, y: 350, end_x: 449, end_y: 450 },
  { type: 'wait', ms: 500 },
  { type: 'terminate', status: 'success', result: 'all done' },
  { type: 'answer', status: 'success', result: '42' },
  { type: 'done', status: 'success', result: 'ok' },
  { type: 'mouse_down', x: 200, y: 150, button: 'left' },
  { type: 'mouse_up', x: 300, y: 160, button: 'left' },
  { type: 'move', x: 10, y: 700 },
];

describe('0–999 model space', () => {
  it('names every pixel of any display up to 1000 px so that int(v / 1000 × size) lands on it', () => {
    const misses: string[] = [];
    for (let size = 1; size <= 1000; size++) {
      for (let pixel = 0; pixel < size; pixel++) {
        const value = toModelSpace(pixel, size);
        const landed = fromModelSpace(value, size);
        if (landed !== pixel || value < 0 || value > 999 || !Number.isInteger(value)) {
          misses.push(`pixel ${pixel} of ${size}: ${value} lands on ${landed}`);
        }
      }
    }
    expect(misses).toEqual([]);
  });

  it('lands exactly wherever 0–999 can reach on larger displays, and less than one step of 0–999 off where it cannot', () => {
    for (const size of [1024, 1280, 1366, 1920, 2560, 3840]) {
      const reachable = new Set(Array.from({ length: 1000 }, (_, v) => fromModelSpace(v, size)));
      for (let pixel = 0; pixel < size; pixel++) {
        const landed = fromModelSpace(toModelSpace(pixel, size), size);
        if (reachable.has(pixel)) expect(landed).toBe(pixel);
        else expect(Math.abs(landed - pixel)).toBeLessThan(size / 1000);
      }
    }
  });

  it('clamps points off the display to its edges', () => {
    expect(fromModelSpace(toModelSpace(-20, 720), 720)).toBe(0);
    expect(fromModelSpace(toModelSpace(5000, 720), 720)).toBe(719);
  });
});

describe('which SDK is asking', () => {
  it('tells the SDKs with typed Responses models from older ones and from other vendors', () => {
    expect(isTypedLightconeSdk(SDK_HEADERS.currentPython)).toBe(true);
    expect(isTypedLightconeSdk(SDK_HEADERS.firstTypedPython)).toBe(true);
    expect(isTypedLightconeSdk(SDK_HEADERS.currentTypeScript)).toBe(true);
    expect(isTypedLightconeSdk(SDK_HEADERS.firstTypedTypeScript)).toBe(true);
    expect(isTypedLightconeSdk(SDK_HEADERS.lastUntypedPython)).toBe(false);
    expect(isTypedLightconeSdk(SDK_HEADERS.seedPython)).toBe(false);
    expect(isTypedLightconeSdk(SDK_HEADERS.seedTypeScript)).toBe(false);
    expect(isTypedLightconeSdk(SDK_HEADERS.openAIPython)).toBe(false);
    expect(isTypedLightconeSdk({})).toBe(false);
    expect(isTypedLightconeSdk({ 'x-stainless-lang': 'python' })).toBe(false);
    // Without a User-Agent the Stainless headers alone decide.
    const { 'user-agent': _agent, ...bare } = SDK_HEADERS.currentPython;
    expect(isTypedLightconeSdk(bare)).toBe(true);
    expect(isTypedLightconeSdk({ ...bare, 'x-stainless-package-version': '3.0.0' })).toBe(true);
    expect(isTypedLightconeSdk({ ...bare, 'x-stainless-package-version': 'latest' })).toBe(false);
    expect(isTypedLightconeSdk({ ...bare, 'x-stainless-lang': 'go' })).toBe(false);
  });

  it('names the client for a person, with the prefix of its key only', () => {
    const principal = { org: 'local', keyId: 'key_1', keyPrefix: 'sk_5bRW' };
    const named = (headers: Record<string, string>) => describeClient(headers, principal);
    expect(named(SDK_HEADERS.currentPython)).toBe('Python SDK 2.39.0 (key sk_5bRW…)');
    expect(named(SDK_HEADERS.seedTypeScript)).toBe('TypeScript SDK 0.7.0 (key sk_5bRW…)');
    expect(named(SDK_HEADERS.openAIPython)).toBe('OpenAI Python SDK 2.8.0 (key sk_5bRW…)');
    expect(named({ 'user-agent': 'curl/8.5.0' })).toBe('curl/8.5.0 (key sk_5bRW…)');
    expect(named({ 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131' })).toBe(
      'Mozilla/5.0 (key sk_5bRW…)',
    );
    expect(named({})).toBe('a client that gave no name (key sk_5bRW…)');
    // What a client says of itself is shown to a person: no control characters, kept short.
    expect(named({ 'user-agent': `evil\u001b[2J${'x'.repeat(200)}` })).toBe(
      `evil[2J${'x'.repeat(53)} (key sk_5bRW…)`,
    );
  });

  it('lets the computer_use tool choose the coordinate space explicitly', () => {
    expect(dialectFor(true)).toEqual({ typed: true, coordinates: 'model' });
    expect(dialectFor(false)).toEqual({ typed: false, coordinates: 'pixels' });
    expect(dialectFor(true, [{ ...TOOL, coordinate_space: 'pixels' }]).coordinates).toBe('pixels');
    expect(dialectFor(false, [{ ...TOOL, coordinate_space: 'model' }]).coordinates).toBe('model');
  });
});

describe('a response as each client reads it', () => {
  it('gives plain HTTP and the older SDKs the contract unchanged', () => {
    const stored = response(EVERY_ACTION);
    expect(presentResponse(stored, CONTRACT_DIALECT)).toEqual(stored);
  });

  it('parses in the typed SDKs as their typed models wherever they have one', () => {
    const answer = presentResponse(response(EVERY_ACTION), TYPED);
    expect(TypedResponse.parse(answer).created_at).toBe(
      Math.floor(Date.parse('2026-11-23T10:00:00.250Z') / 1000),
    );
    expect(answer.output.map(typedModelOf)).toEqual([
      'untyped', // reasoning: the SDKs have no model for it
      'computer_call/ActionClick',
      'computer_call/ActionClick',
      'computer_call/ActionDoubleClick',
      'untyped', // triple_click
      'computer_call/ActionClick',
      'computer_call/ActionType',
      'computer_call/ActionPointAndType',
      'computer_call/ActionKeypress',
      'computer_call/ActionKeypress',
      'computer_call/ActionKeyDown',
      'computer_call/ActionKeyUp',
      'computer_call/ActionScroll',
      'computer_call/ActionScroll',
      'untyped', // navigate
      'computer_call/ActionDrag',
      'computer_call/ActionWait',
      'untyped', // terminate
      'untyped', // answer
      'untyped', // done
      'computer_call/ActionMouseDown',
      'computer_call/ActionMouseUp',
      'computer_call/ActionMove',
      'message',
    ]);
  });

  it('puts points in 0–999 where the examples convert them, so they land on the meant pixel', () => {
    const answer = presentResponse(response(EVERY_ACTION), TYPED);
    const actions = answer.output.flatMap((item) =>
      item.type === 'computer_call' ? [item.action as Record<string, unknown>] : [],
    );
    const performed = actions.map((action) => exampleAction(action, TOOL));
    expect(performed[0]).toEqual({ type: 'click', x: 200, y: 150, button: 'left' });
    expect(performed[1]).toMatchObject({ type: 'click', button: 'wheel' });
    expect(performed[4]).toEqual({ type: 'click', x: 200, y: 150, button: 'right' });
    expect(performed[6]).toEqual({ type: 'point_and_type', x: 550, y: 150, text: 'hello' });
    expect(performed[11]).toEqual({ type: 'scroll', x: 640, y: 360, scroll_x: 0, scroll_y: 300 });
    expect(performed[12]).toEqual({ type: 'scroll', x: 640, y: 360, scroll_x: 200, scroll_y: 0 });
    // The examples pass a path on as it is: it is pixels.
    expect(performed[14]).toEqual({
      type: 'drag',
      path: [
        { x: 151, y: 350 },
        { x: 449, y: 450 },
      ],
    });
    expect(actions[0]).toEqual({ type: 'click', x: 157, y: 209, button: 'left' });
  });

  it('converts a typed SDK’s explicit pixels and a plain client’s explicit model space alike', () => {
    const pixels = presentResponse(
      response(EVERY_ACTION),
      dialectFor(true, [{ ...TOOL, coordinate_space: 'pixels' }]),
    );
    expect((pixels.output[1] as { action: unknown }).action).toEqual({
      type: 'click',
      x: 200,
      y: 150,
      button: 'left',
    });
    const model = presentResponse(
      response(EVERY_ACTION),
      dialectFor(false, [{ ...TOOL, coordinate_space: 'model' }]),
    );
    expect((model.output[15] as { action: unknown }).action).toEqual({
      type: 'drag',
      x: toModelSpace(151, 1280),
      y: toModelSpace(350, 720),
      end_x: toModelSpace(449, 1280),
      end_y: toModelSpace(450, 720),
    });
    expect(typeof model.created_at).toBe('string');
  });

  it('gives the typed shapes without a computer tool too, the points left in pixels', () => {
    const answer = presentResponse(
      response([{ type: 'drag', x: 151, y: 350, end_x: 449, end_y: 450 }], { viewport: null }),
      TYPED,
    );
    expect((answer.output[1] as { action: unknown }).action).toEqual({
      type: 'drag',
      path: [
        { x: 151, y: 350 },
        { x: 449, y: 450 },
      ],
    });
    expect(answer.output.map(typedModelOf)[1]).toBe('computer_call/ActionDrag');
  });

  it('converts stream events’ items with the request’s display', () => {
    const stored = response([{ type: 'move', x: 10, y: 700 }]);
    const item = stored.output[1]!;
    const event = presentEvent(
      { type: 'response.output_item.done', sequence_number: 3, output_index: 1, item },
      TYPED,
      { width: 1280, height: 720 },
    );
    expect((event.item as { action: unknown }).action).toEqual({
      type: 'move',
      x: toModelSpace(10, 1280),
      y: toModelSpace(700, 720),
    });
  });

  it('reads computer_calls sent back in the typed shapes and 0–999 as the pixels performed', () => {
    const answer = presentResponse(response(EVERY_ACTION), TYPED);
    const sentBack = answer.output.filter((item) => item.type === 'computer_call');
    const body = readRequest({ input: sentBack as never, tools: [TOOL] } as never, TYPED) as {
      input: Array<{ action: Record<string, unknown> }>;
    };
    const actions = body.input.map((item) => item.action);
    expect(actions[0]).toEqual({ type: 'click', x: 200, y: 150, button: 'left' });
    expect(actions[1]).toMatchObject({ type: 'click', button: 'middle' });
    expect(actions[6]).toEqual({ type: 'type', x: 550, y: 150, text: 'hello' });
    expect(actions[14]).toEqual({ type: 'drag', x: 151, y: 350, end_x: 449, end_y: 450 });
  });
});
