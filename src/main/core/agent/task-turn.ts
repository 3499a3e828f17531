import type { CreateResponseBody, FunctionTool, InputItem } from '../../../shared/responses.js';
import type { SessionSpec } from '../computers/computer-session.js';
import type { z } from 'zod';

/** A task's model call: its request, what it tells the model, and the one function it offers. */

export type OpenCall = { id: string; kind: 'computer' | 'function'; name?: string };

const INSTRUCTIONS =
  'You operate a computer for the user through the computer tool, one step at a time, looking at ' +
  'each new screenshot. When the task is done, stop calling the tool and answer with the result. ' +
  'When only a person can go on (signing in, a CAPTCHA, a decision), call request_human.';

export const RESUMED =
  'The user paused you and may have changed things on the computer. Continue from this screenshot.';

/** Offered in every task's model call: the model asks for a person (docs/API.md §14). */
export const REQUEST_HUMAN = {
  type: 'function',
  name: 'request_human',
  description:
    'Ask a person to take over the computer for something you cannot or must not do yourself ' +
    '(signing in, a CAPTCHA, a payment, a decision only they can make). You are paused until ' +
    'they hand the computer back; then you are told what they did.',
  parameters: {
    type: 'object',
    properties: {
      reason: { type: 'string', description: 'What the person should do, and why.' },
    },
    required: ['reason'],
  },
} satisfies z.input<typeof FunctionTool>;

/** The reason in request_human's arguments (JSON text), or a stand-in when the model gave none. */
export function handoffReason(args: string): string {
  try {
    const reason = (JSON.parse(args) as { reason?: unknown }).reason;
    if (typeof reason === 'string' && reason.trim()) return reason.trim();
  } catch {
    // A model that garbles its arguments still asked for a person.
  }
  return 'the model asked for a person without saying why';
}

/** The output of a function call: what the task has for it, else why it did nothing. */
export function functionOutput(call: OpenCall, outputs: ReadonlyMap<string, string>): string {
  const output = outputs.get(call.id);
  if (output !== undefined) return output;
  if (call.name === REQUEST_HUMAN.name) {
    return 'Nobody was asked: an action before this call in your turn failed. Call request_human again if you still need a person.';
  }
  return `There is no function "${call.name}" here; use the computer tool, or request_human to ask for a person.`;
}

/** An action a policy or a person refused ("denied: …"), or whose approval came too late. */
export function isRefusal(message: string): boolean {
  return message.startsWith('denied:') || message.startsWith('approval expired');
}

/** What the model is told of a refused action; `asked` says whether a person decided it. */
export function refusalNote(type: string, message: string, asked: boolean): string {
  if (message.startsWith('approval expired')) {
    return `Your ${type} action was not performed: ${message}. The remaining actions of that turn were skipped.`;
  }
  const why = message.slice('denied:'.length).trim();
  const by = asked ? 'by a person' : 'by a policy';
  return `Your ${type} action was denied ${by}: ${why}. It was not performed, nor the remaining actions of that turn; find another way, or finish.`;
}

/** The Responses request of a step: the computer tool for the task's display, and request_human. */
export function turnRequest(turn: {
  model: string;
  spec: Pick<SessionSpec, 'display' | 'kind'>;
  previousResponse: string | undefined;
  input: InputItem[];
  temperature: number | undefined;
}): CreateResponseBody {
  const { display, kind } = turn.spec;
  return {
    model: turn.model,
    instructions: INSTRUCTIONS,
    tools: [
      {
        type: 'computer_use',
        display_width: display.width,
        display_height: display.height,
        environment: kind === 'browser' ? 'browser' : 'linux',
      },
      REQUEST_HUMAN,
    ],
    previous_response_id: turn.previousResponse,
    input: turn.input,
    temperature: turn.temperature,
  } as CreateResponseBody;
}

/**
 * A step's input: the instruction with the screenshot on the first step, else the screenshot
 * answering every open call (and function outputs); then the notes for the model.
 */
export function turnInput(turn: {
  image: string;
  /** Set on the first step only. */
  instruction: string | null;
  openCalls: readonly OpenCall[];
  outputs: ReadonlyMap<string, string>;
  notes: readonly string[];
}): InputItem[] {
  const { image } = turn;
  const screenshot = { type: 'computer_screenshot' as const, image_url: image };
  const items: InputItem[] =
    turn.instruction !== null
      ? [
          {
            role: 'user',
            content: [
              { type: 'input_text', text: turn.instruction },
              { type: 'input_image', image_url: image },
            ],
          },
        ]
      : turn.openCalls.map((call) =>
          call.kind === 'computer'
            ? { type: 'computer_call_output', call_id: call.id, output: screenshot }
            : {
                type: 'function_call_output',
                call_id: call.id,
                output: functionOutput(call, turn.outputs),
              },
        );
  if (turn.instruction === null && !turn.openCalls.some((call) => call.kind === 'computer')) {
    items.push({ role: 'user', content: [{ type: 'input_image', image_url: image }] });
  }
  for (const text of turn.notes) items.push({ role: 'user', content: text });
  return items;
}
