import { z } from 'zod';
import { Timestamp } from './common.js';

/** Action types a computer_call may carry. */
export const OUTPUT_ACTION_TYPES = [
  'click',
  'double_click',
  'triple_click',
  'right_click',
  'type',
  'key',
  'keypress',
  'key_down',
  'key_up',
  'scroll',
  'hscroll',
  'navigate',
  'drag',
  'wait',
  'terminate',
  'answer',
  'done',
  'mouse_down',
  'mouse_up',
  'move',
] as const;
export type OutputActionType = (typeof OUTPUT_ACTION_TYPES)[number];

const Pixel = z.number().int();

/** The action of a computer_call, in integer pixels of the tool's display. */
export const OutputAction = z
  .object({
    type: z.enum(OUTPUT_ACTION_TYPES),
    x: Pixel.optional(),
    y: Pixel.optional(),
    end_x: Pixel.optional(),
    end_y: Pixel.optional(),
    scroll_x: z.number().int().optional(),
    scroll_y: z.number().int().optional(),
    button: z.enum(['left', 'right', 'middle', 'wheel', 'back', 'forward']).optional(),
    keys: z.array(z.string()).optional(),
    text: z.string().optional(),
    url: z.string().optional(),
    ms: z.number().optional(),
    status: z.string().optional(),
    result: z.string().optional(),
  })
  .meta({ id: 'ResponseComputerAction' });
export type OutputAction = z.infer<typeof OutputAction>;

export const ReasoningItem = z.object({
  id: z.string(),
  type: z.literal('reasoning'),
  summary: z.array(z.object({ type: z.literal('summary_text'), text: z.string() })),
});
export const MessageItem = z.object({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  status: z.literal('completed'),
  content: z.array(
    z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.never()) }),
  ),
});
export const ComputerCallItem = z.object({
  id: z.string(),
  type: z.literal('computer_call'),
  call_id: z.string(),
  status: z.literal('completed'),
  pending_safety_checks: z.array(z.never()),
  action: OutputAction,
});
export const FunctionCallItem = z.object({
  id: z.string(),
  type: z.literal('function_call'),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string().describe('JSON text of the arguments'),
  status: z.literal('completed'),
});
export const OutputItem = z
  .discriminatedUnion('type', [ReasoningItem, MessageItem, ComputerCallItem, FunctionCallItem])
  .meta({ id: 'ResponseOutputItem' });
export type OutputItem = z.infer<typeof OutputItem>;

export const RESPONSE_STATUSES = [
  'completed',
  'in_progress',
  'failed',
  'cancelled',
  'incomplete',
] as const;
export type ResponseStatus = (typeof RESPONSE_STATUSES)[number];

export const Usage = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  total_tokens: z.number().int(),
});
export type Usage = z.infer<typeof Usage>;

export const Viewport = z.object({
  environment: z.string(),
  width: z.number().int(),
  height: z.number().int(),
});
export type Viewport = z.infer<typeof Viewport>;

export const ResponseObject = z
  .object({
    id: z.string(),
    object: z.literal('response'),
    created_at: Timestamp,
    model: z.string(),
    status: z.enum(RESPONSE_STATUSES),
    output: z.array(OutputItem),
    usage: Usage,
    computer_id: z.string().nullable(),
    viewport: Viewport.nullable(),
    instructions: z.string().nullable(),
    max_output_tokens: z.number().int().nullable(),
    temperature: z.number().nullable(),
    top_p: z.number().nullable(),
    previous_response_id: z.string().nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    tools: z
      .array(z.record(z.string(), z.unknown()))
      .describe('The tools the request offered, as given (after defaults).'),
  })
  .meta({ id: 'Response' });
export type ResponseObject = z.infer<typeof ResponseObject>;

/** The Response as a client reads it: the Lightcone SDKs with typed Responses models get their own shapes. */
const ClientOutputItem = z.discriminatedUnion('type', [
  ReasoningItem,
  MessageItem,
  ComputerCallItem.extend({
    action: z
      .record(z.string(), z.unknown())
      .describe(
        'A ResponseComputerAction; for the Lightcone SDKs with typed Responses models, in their ' +
          'typed shapes (and coordinates 0–999 when the computer tool says `model`).',
      ),
  }),
  FunctionCallItem,
]);

export const ClientResponseObject = ResponseObject.extend({
  output: z.array(ClientOutputItem),
  created_at: z
    .union([Timestamp, z.number().int()])
    .describe(
      'ISO-8601 UTC; integer unix seconds for the Lightcone SDKs with typed Responses models ' +
        '(Python ≥ 2.35.0, TypeScript ≥ 0.10.0, told by X-Stainless-Lang and X-Stainless-Package-Version)',
    ),
}).meta({ id: 'ClientResponse' });

export const ResponseDeleted = z.object({
  id: z.string(),
  object: z.literal('response.deleted'),
  deleted: z.literal(true),
});

// ---- Request bodies ---------------------------------------------------------------------------

const MAX_TEXT = 1_000_000;
const ImageUrl = z.string().min(1, 'image_url must not be empty');

export const ContentBlock = z
  .object({
    type: z.enum(['input_text', 'output_text', 'summary_text', 'input_image']),
    text: z.string().max(MAX_TEXT).optional(),
    image_url: ImageUrl.optional(),
    detail: z.string().optional(),
  })
  .superRefine((block, ctx) => {
    if (block.type === 'input_image') {
      if (block.image_url === undefined) {
        ctx.addIssue({ code: 'custom', path: ['image_url'], message: 'image_url is required' });
      }
    } else if (block.text === undefined) {
      ctx.addIssue({ code: 'custom', path: ['text'], message: 'text is required' });
    }
  });
export type ContentBlock = z.infer<typeof ContentBlock>;

export const InputMessage = z.object({
  type: z.literal('message').optional(),
  id: z.string().optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string().max(MAX_TEXT), z.array(ContentBlock).max(1000)]),
});
export const ComputerCallOutput = z.object({
  type: z.literal('computer_call_output'),
  id: z.string().optional(),
  call_id: z.string().min(1, 'call_id must not be empty'),
  output: z.object({
    type: z.enum(['input_image', 'computer_screenshot']),
    image_url: ImageUrl,
  }),
});
export const FunctionCallOutput = z.object({
  type: z.literal('function_call_output'),
  id: z.string().optional(),
  call_id: z.string().min(1, 'call_id must not be empty'),
  output: z.union([z.string().max(MAX_TEXT), z.array(ContentBlock)]),
});
export const InputReasoning = z.object({
  type: z.literal('reasoning'),
  id: z.string().optional(),
  summary: z.array(z.object({ text: z.string() })).default([]),
});
export const InputComputerCall = z.object({
  type: z.literal('computer_call'),
  id: z.string().optional(),
  call_id: z.string().min(1),
  action: z.looseObject({ type: z.string() }),
});
export const InputFunctionCall = z.object({
  type: z.literal('function_call'),
  id: z.string().optional(),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string().default('{}'),
});

const ITEM_OPTIONS = [
  InputMessage,
  ComputerCallOutput,
  FunctionCallOutput,
  InputReasoning,
  InputComputerCall,
  InputFunctionCall,
] as const;
export const INPUT_ITEM_TYPES = [
  'message',
  'computer_call_output',
  'function_call_output',
  'reasoning',
  'computer_call',
  'function_call',
] as const;

/** An item is chosen by its `type`; a bare `{role, content}` (no type) is a message. */
export const InputItem = z
  .discriminatedUnion('type', ITEM_OPTIONS, {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? `type must be one of: ${INPUT_ITEM_TYPES.join(', ')}`
        : undefined,
  })
  .meta({ id: 'InputItem' });
export type InputItem = z.output<typeof InputItem>;

export const COORDINATE_SPACES = ['pixels', 'model'] as const;
export type CoordinateSpace = (typeof COORDINATE_SPACES)[number];

export const ComputerTool = z.object({
  type: z.enum(['computer_use', 'computer_use_preview']),
  display_width: z.number().int().min(1).max(7680),
  display_height: z.number().int().min(1).max(4320),
  environment: z.string().default('browser'),
  coordinate_space: z
    .enum(COORDINATE_SPACES)
    .optional()
    .describe(
      'Benchtop extension: the space of x, y (and x1…y2, end_x, end_y) in computer_call actions, ' +
        'in answers and in computer_calls sent back. `pixels`: display pixels; `model`: 0–999, ' +
        'chosen so that int(v / 1000 × display) is the pixel meant (a drag path and scroll ' +
        'amounts stay pixels). Default: `model` for the Lightcone SDKs with the typed Responses ' +
        'models (Python ≥ 2.35.0, TypeScript ≥ 0.10.0), `pixels` for everyone else.',
    ),
});
export const FunctionTool = z.object({
  type: z.literal('function'),
  name: z.string().min(1).max(64),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
});
export const Tool = z.discriminatedUnion('type', [ComputerTool, FunctionTool], {
  error: 'must be "computer_use", "computer_use_preview" or "function"',
});
export type Tool = z.infer<typeof Tool>;

export const CreateResponseBody = z
  .object({
    model: z.string().min(1).optional(),
    input: z.union([z.string().max(MAX_TEXT), z.array(InputItem).max(10_000)]),
    instructions: z.string().max(MAX_TEXT).optional(),
    previous_response_id: z.string().min(1).optional(),
    tools: z.array(Tool).max(128).optional(),
    max_output_tokens: z.number().int().min(1).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    stream: z.boolean().optional(),
    background: z.boolean().optional(),
  })
  .meta({ id: 'CreateResponse' });
export type CreateResponseBody = z.output<typeof CreateResponseBody>;

/** Events of a streamed response (`stream: true`), each the data of one SSE event. */
export const ResponseStreamEvent = z.object({
  type: z.enum([
    'response.created',
    'response.in_progress',
    'response.output_item.added',
    'response.output_text.delta',
    'response.output_item.done',
    'response.completed',
    'response.failed',
    'response.cancelled',
  ]),
  sequence_number: z.number().int(),
  response: ResponseObject.optional(),
  output_index: z.number().int().optional(),
  item: OutputItem.optional(),
  item_id: z.string().optional(),
  content_index: z.number().int().optional(),
  delta: z.string().optional(),
});
export type ResponseStreamEvent = z.infer<typeof ResponseStreamEvent>;

// ---- Models and chat --------------------------------------------------------------------------

export const ModelEntry = z.object({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
  provider: z.string(),
});
export const ModelList = z.object({ object: z.literal('list'), data: z.array(ModelEntry) });

export const ChatMessage = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).optional(),
});
export const ChatCompletionBody = z
  .looseObject({
    model: z.string().min(1).optional(),
    messages: z.array(ChatMessage).min(1, 'give at least one message'),
    stream: z.boolean().optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    max_tokens: z.number().int().min(1).optional(),
  })
  .meta({ id: 'ChatCompletionRequest' });
export type ChatCompletionBody = z.output<typeof ChatCompletionBody>;

export const ChatCompletion = z
  .looseObject({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.looseObject({
        index: z.number().int(),
        message: z.looseObject({ role: z.literal('assistant'), content: z.string().nullable() }),
        finish_reason: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'ChatCompletion' });
export type ChatCompletion = z.infer<typeof ChatCompletion>;

/** An event of a streamed response as a client reads it (see ClientResponse). */
export const ClientResponseStreamEvent = ResponseStreamEvent.extend({
  response: ClientResponseObject.optional(),
  item: ClientOutputItem.optional(),
}).meta({ id: 'ResponseStreamEvent' });

/** An event of a streamed chat completion: a chunk as the provider sent it, or the failure that ended it. */
export const ChatStreamEvent = z.union([
  z.looseObject({ object: z.literal('chat.completion.chunk') }),
  z.object({ error: z.object({ code: z.string(), message: z.string().optional() }) }),
]);
