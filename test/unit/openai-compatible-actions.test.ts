import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelReply } from '../../src/main/core/models/model-provider.js';
import { createOpenAICompatibleProvider } from '../../src/main/core/models/providers/openai-compatible-provider.js';
import {
  chatCompletion,
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../helpers/fake-chat-completions.js';
import { modelRequest } from '../helpers/model-request.js';

// Every answer a model can give, through the provider and a real HTTP round trip. The display
// is 1280x720, so grid 500 → x 640 / y 360 and grid 300 → y 216 (pixel = round(v × (W−1)/999)).

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'providers', 'openai-compatible');
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(FIXTURES, `${name}.json`), 'utf8'));

let fake: FakeChatCompletions;
beforeAll(async () => {
  fake = await startFakeChatCompletions();
});
afterAll(async () => {
  await fake.close();
});

async function respond(body: unknown, computer = true): Promise<ModelReply> {
  fake.reply({ json: body });
  const provider = createOpenAICompatibleProvider({
    name: 'local-vlm',
    config: { provider: 'openai-compatible', base_url: fake.url },
    apiKey: undefined,
    keyHint: 'set LOCAL_VLM_KEY',
    timeoutMs: 5_000,
    retries: 2,
  });
  return provider.respond(
    modelRequest({ model: 'local-vlm', ...(computer ? {} : { computer: null }) }),
  );
}

const toolCall = (args: unknown) =>
  chatCompletion({
    tool_calls: [
      {
        id: 'chatcmpl-tool-1',
        type: 'function',
        function: { name: 'computer', arguments: JSON.stringify(args) },
      },
    ],
  });
const said = (content: string) => chatCompletion({ content });
const at = { x: 500, y: 300 };
const px = { x: 640, y: 216 };

describe('computer tool calls → actions in pixels', () => {
  it.each([
    [
      { action: 'click', ...at },
      { type: 'click', ...px, button: 'left' },
    ],
    [
      { action: 'click', ...at, button: 'middle' },
      { type: 'click', ...px, button: 'middle' },
    ],
    [
      { action: 'double_click', ...at },
      { type: 'double_click', ...px, button: 'left' },
    ],
    [
      { action: 'triple_click', ...at },
      { type: 'triple_click', ...px, button: 'left' },
    ],
    [
      { action: 'right_click', ...at },
      { type: 'right_click', ...px, button: 'right' },
    ],
    [
      { action: 'mouse_down', ...at },
      { type: 'mouse_down', ...px, button: 'left' },
    ],
    [
      { action: 'mouse_up', ...at },
      { type: 'mouse_up', ...px, button: 'left' },
    ],
    [
      { action: 'move', x: 999, y: 0 },
      { type: 'move', x: 1279, y: 0 },
    ],
    [
      { action: 'drag', x: 0, y: 0, end_x: 999, end_y: 999 },
      { type: 'drag', x: 0, y: 0, end_x: 1279, end_y: 719 },
    ],
    [
      { action: 'scroll', x: 500, y: 500, scroll_y: 300 },
      { type: 'scroll', x: 640, y: 360, scroll_y: 300 },
    ],
    [
      { action: 'scroll', scroll_x: -200 },
      { type: 'scroll', x: 640, y: 360, scroll_x: -200, scroll_y: 0 },
    ],
    [
      { action: 'hscroll', x: 0, y: 0, scroll_x: 120 },
      { type: 'hscroll', x: 0, y: 0, scroll_x: 120 },
    ],
    [
      { action: 'type', text: 'Lisbon' },
      { type: 'type', text: 'Lisbon' },
    ],
    [
      { action: 'key', keys: ['Return'] },
      { type: 'key', keys: ['enter'] },
    ],
    [
      { action: 'keypress', keys: ['ctrl', 'a'] },
      { type: 'keypress', keys: ['control', 'a'] },
    ],
    [
      { action: 'key_down', keys: ['Shift'] },
      { type: 'key_down', keys: ['shift'] },
    ],
    [
      { action: 'key_up', keys: 'shift' },
      { type: 'key_up', keys: ['shift'] },
    ],
    [
      { action: 'navigate', url: 'https://example.com' },
      { type: 'navigate', url: 'https://example.com' },
    ],
    [
      { action: 'wait', ms: 500 },
      { type: 'wait', ms: 500 },
    ],
    [{ action: 'wait' }, { type: 'wait', ms: 1000 }],
    [
      { action: 'wait', ms: 90_000 },
      { type: 'wait', ms: 55_000 },
    ],
    [{ action: 'screenshot' }, { type: 'wait', ms: 0 }],
    [
      { action: 'done', result: 'Booked.' },
      { type: 'done', result: 'Booked.' },
    ],
    [
      { action: 'answer', result: '42' },
      { type: 'answer', result: '42' },
    ],
    [
      { action: 'terminate', result: 'Blocked by a captcha' },
      { type: 'terminate', result: 'Blocked by a captcha' },
    ],
    // Qwen2.5-VL's own computer_use vocabulary.
    [
      { action: 'left_click', coordinate: [500, 300] },
      { type: 'click', ...px, button: 'left' },
    ],
    [
      { action: 'mouse_move', coordinate: [500, 300] },
      { type: 'move', ...px },
    ],
    [
      { action: 'middle_click', coordinate: [500, 300] },
      { type: 'click', ...px, button: 'middle' },
    ],
    [
      { action: 'scroll', coordinate: [500, 300], pixels: 200 },
      { type: 'scroll', ...px, scroll_y: -200 },
    ],
    [
      { action: 'wait', time: 2 },
      { type: 'wait', ms: 2000 },
    ],
  ])('%j', async (args, action) => {
    const reply = await respond(toolCall(args));
    expect(reply.output).toEqual([{ type: 'computer_call', action }]);
  });

  it.each([
    ['ctrl+shift+t', ['control', 'shift', 't']],
    ['Page_Down', ['pagedown']],
    ['BackSpace', ['backspace']],
    ['CTRL', ['control']],
    ['ENTER', ['enter']],
    ['ARROWLEFT', ['arrowleft']],
    ['Control_L', ['control']],
    ['Prior', ['pageup']],
    ['super+Up', ['meta', 'arrowup']],
    ['ctrl c', ['control', 'c']],
    ['ctrl++', ['control', '+']],
  ])('maps the key %j', async (key, keys) => {
    const reply = await respond(toolCall({ action: 'keypress', keys: [key] }));
    expect(reply.output).toEqual([{ type: 'computer_call', action: { type: 'keypress', keys } }]);
  });

  it('reads the fixture: a click with its usage', async () => {
    expect(await respond(fixture('tool-call-click'))).toEqual({
      output: [{ type: 'computer_call', action: { type: 'click', ...px, button: 'left' } }],
      usage: { input_tokens: 1534, output_tokens: 26, cached_tokens: 0 },
    });
  });

  it('turns other tool calls into function calls, with the text beside them as reasoning', async () => {
    expect((await respond(fixture('function-call'))).output).toEqual([
      { type: 'reasoning', text: 'I need the order status before going on.' },
      { type: 'function_call', name: 'lookup_order', arguments: '{"order_id": "A-1001"}' },
    ]);
  });

  it.each([
    [{ action: 'fly', ...at }, /unknown computer action "fly"/],
    [{ x: 1, y: 2 }, /computer action without a type/],
    [{ action: 'click' }, /"click" action without x and y/],
    [{ action: 'click', x: 'left', y: 3 }, /non-numeric x/],
    [{ action: 'click', ...at, button: 'side' }, /mouse button "side"/],
    [{ action: 'drag', ...at }, /without end_x and end_y/],
    [{ action: 'scroll', ...at }, /without scroll_x, scroll_y or a direction/],
    [{ action: 'type' }, /"type" action without text/],
    [{ action: 'keypress', keys: ['hyper'] }, /unknown key "hyper"/],
    [{ action: 'key_down', keys: ['ctrl', 'a'] }, /without exactly one key/],
    [{ action: 'navigate' }, /without url/],
  ])('refuses %j', async (args, message) => {
    await expect(respond(toolCall(args))).rejects.toMatchObject({
      name: 'ModelError',
      kind: 'bad_answer',
      message: expect.stringMatching(message),
    });
  });

  it('refuses tool arguments that are not JSON, naming what came back', async () => {
    const body = chatCompletion({
      tool_calls: [
        { id: 't', type: 'function', function: { name: 'computer', arguments: '{"action": cl' } },
      ],
    });
    await expect(respond(body)).rejects.toMatchObject({
      kind: 'bad_answer',
      message: expect.stringMatching(/model "local-vlm" answered with .*not JSON: \{"action": cl/),
    });
  });
});

describe('actions written in the text', () => {
  it('reads UI-TARS "Thought: … Action: …" (the fixture)', async () => {
    expect(await respond(fixture('ui-tars-thought-action'))).toEqual({
      output: [
        {
          type: 'reasoning',
          text: "The search box sits at the top of the page. I'll click it to focus it before typing.",
        },
        { type: 'computer_call', action: { type: 'click', ...px, button: 'left' } },
      ],
      usage: { input_tokens: 2211, output_tokens: 45, cached_tokens: 0 },
    });
  });

  it.each([
    ["click(start_box='(500,300)')", { type: 'click', ...px, button: 'left' }],
    [
      "left_double(point='<point>500 300</point>')",
      { type: 'double_click', ...px, button: 'left' },
    ],
    [
      "right_single(start_box='[100,200,300,400]')",
      { type: 'right_click', x: 256, y: 216, button: 'right' },
    ],
    ["type(content='hello')", { type: 'type', text: 'hello' }],
    ["type(content='it's done\\n')", { type: 'type', text: "it's done\n" }],
    ["hotkey(key='ctrl c')", { type: 'keypress', keys: ['control', 'c'] }],
    ["press(key='Page_Down')", { type: 'keypress', keys: ['pagedown'] }],
    [
      "scroll(start_box='(500,500)', direction='down')",
      { type: 'scroll', x: 640, y: 360, scroll_y: 360 },
    ],
    [
      "scroll(start_box='(500,500)', direction='left')",
      { type: 'scroll', x: 640, y: 360, scroll_x: -640, scroll_y: 0 },
    ],
    ["drag(start_box='(1,2)', end_box='(3,4)')", { type: 'drag', x: 1, y: 1, end_x: 4, end_y: 3 }],
    [
      "finished(content='Booked the 9:40 flight.')",
      { type: 'done', result: 'Booked the 9:40 flight.' },
    ],
    ['wait()', { type: 'wait', ms: 1000 }],
    ['{"action":"click","x":500,"y":300}', { type: 'click', ...px, button: 'left' }],
    [
      '<tool_call>\n{"name": "computer_use", "arguments": {"action": "left_click", "coordinate": [500, 300]}}\n</tool_call>',
      { type: 'click', ...px, button: 'left' },
    ],
  ])('%s', async (content, action) => {
    expect((await respond(said(content))).output).toEqual([{ type: 'computer_call', action }]);
  });

  it('reads a fenced JSON action, the prose before it as reasoning (the fixture)', async () => {
    expect((await respond(fixture('json-action-fenced'))).output).toEqual([
      { type: 'reasoning', text: 'The search box is focused, so I type the query.' },
      { type: 'computer_call', action: { type: 'type', text: 'benchtop' } },
    ]);
  });

  it('reads several actions in one answer, and <think> as reasoning', async () => {
    const content =
      "<think>Search first.</think>\nAction: click(start_box='(500,300)')\n\ntype(content='LIS')";
    expect((await respond(said(content))).output).toEqual([
      { type: 'reasoning', text: 'Search first.' },
      { type: 'computer_call', action: { type: 'click', ...px, button: 'left' } },
      { type: 'computer_call', action: { type: 'type', text: 'LIS' } },
    ]);
  });

  it.each([
    ['I could not find any direct flights.'],
    ['Done (mostly): the cheapest is {"price": 120}.'],
    ['call_user()'],
  ])('leaves anything else a message: %s', async (content) => {
    const [item] = (await respond(said(content))).output;
    expect(item!.type).toBe('message');
    if (content !== 'call_user()') expect(item).toEqual({ type: 'message', text: content });
  });

  it('reads no actions outside computer mode', async () => {
    const content = "click(start_box='(500,300)')";
    expect((await respond(said(content), false)).output).toEqual([
      { type: 'message', text: content },
    ]);
  });

  it.each([
    ["Thought: go.\nAction: fly(start_box='(1,2)')", /unknown computer action "fly"/],
    ['Action: click me please', /an action Benchtop cannot read: click me please/],
    ["Action: click(start_box='(500)')", /a point Benchtop cannot read/],
  ])('refuses %j', async (content, message) => {
    await expect(respond(said(content))).rejects.toMatchObject({
      kind: 'bad_answer',
      message: expect.stringMatching(message),
    });
  });

  it('refuses an empty answer', async () => {
    await expect(respond(said(''))).rejects.toMatchObject({ kind: 'bad_answer' });
  });
});
