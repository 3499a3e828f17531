import { z } from 'zod';
import { Coordinate, Timestamp } from './common.js';
import { execFields, maxOutputLength } from './exec.js';

/** Fields any action body may carry. */
const common = {
  tab_id: z.string().max(200).optional(),
  request_id: z.string().max(200).optional(),
  include_context: z.boolean().optional(),
};

const point = { x: Coordinate, y: Coordinate };
const Delta = z.number().finite().min(-100_000).max(100_000);
const MouseButton = z.enum(['left', 'right', 'middle', 'wheel', 'back', 'forward']);
const KeyName = z.string().min(1, 'a key name must not be empty').max(100);
const Keys = z.array(KeyName).min(1, 'give at least one key').max(32);
const Text = z.string().max(100_000);
const Url = z.string().min(1, 'url must not be empty').max(8192);
export const MAX_WAIT_MS = 55_000;

export const DebugCommand = z.object({
  ...execFields,
  max_output_length: maxOutputLength(65_536),
});
export type DebugCommand = z.infer<typeof DebugCommand>;

const dragFields = {
  x1: Coordinate.optional(),
  y1: Coordinate.optional(),
  x2: Coordinate.optional(),
  y2: Coordinate.optional(),
  // The shape /v1/responses and several providers emit: start at x, y, end at end_x, end_y.
  x: Coordinate.optional(),
  y: Coordinate.optional(),
  end_x: Coordinate.optional(),
  end_y: Coordinate.optional(),
  path: z
    .array(z.object(point))
    .min(2, 'a drag path needs at least two points')
    .max(1000)
    .optional(),
};
type DragInput = Partial<Record<(typeof DRAG_ENDS)[number][number], number>> & {
  path?: unknown[];
};
/** The spellings of a drag's two ends, in the order they are tried. */
export const DRAG_ENDS = [
  ['x1', 'y1', 'x2', 'y2'],
  ['x', 'y', 'end_x', 'end_y'],
] as const;
function requireDragEnds(value: DragInput, ctx: z.RefinementCtx): void {
  if (value.path) return;
  if (DRAG_ENDS.some((fields) => fields.every((field) => value[field] !== undefined))) return;
  const [fields] = DRAG_ENDS.filter((spelling) => spelling.some((f) => value[f] !== undefined));
  const missing = (fields ?? DRAG_ENDS[0]).find((field) => value[field] === undefined)!;
  ctx.addIssue({
    code: 'custom',
    path: [missing],
    message: `${missing} is required (a drag takes x1, y1, x2, y2; or x, y, end_x, end_y; or path)`,
  });
}

const scrollFields = {
  ...point,
  dx: Delta.optional(),
  dy: Delta.optional(),
  scroll_x: Delta.optional(),
  scroll_y: Delta.optional(),
};

const finishFields = {
  status: z.string().max(1000).optional(),
  result: z.string().max(100_000).optional(),
};

/** Fields of each ComputerAction type, keyed by every accepted type name (aliases included). */
const actionFields = {
  click: { ...point, button: MouseButton.optional() },
  double_click: point,
  triple_click: point,
  right_click: point,
  mouse_down: { ...point, button: MouseButton.optional() },
  mouse_up: { ...point, button: MouseButton.optional() },
  move: point,
  drag: dragFields,
  scroll: scrollFields,
  hscroll: scrollFields,
  // With a position, as /v1/responses emits it for models that point and type: click, then type.
  type: { text: Text, x: Coordinate.optional(), y: Coordinate.optional() },
  point_and_type: { ...point, text: Text },
  keypress: { keys: Keys },
  key: { keys: Keys.optional(), key: KeyName.optional() },
  hotkey: { keys: Keys },
  key_down: { key: KeyName.optional(), keys: Keys.optional() },
  key_up: { key: KeyName.optional(), keys: Keys.optional() },
  wait: { ms: z.number().finite().min(0).max(MAX_WAIT_MS).default(1000) },
  screenshot: { base64: z.boolean().optional() },
  go_to_url: { url: Url },
  navigate: { url: Url },
  get_html_content: { auto_detect_encoding: z.boolean().optional() },
  set_viewport: {
    width: z.number().int().min(64).max(7680),
    height: z.number().int().min(64).max(4320),
    scale_factor: z.number().min(0.5).max(4).optional(),
  },
  change_proxy: { proxy_url: z.string().max(2048) },
  list_tabs: {},
  new_tab: { url: Url.optional() },
  switch_tab: { tab_id: z.string().min(1).max(200) },
  close_tab: { tab_id: z.string().min(1).max(200) },
  debug: { debug: DebugCommand },
  // A model's signal that the task is over (/v1/responses emits them): performed as nothing.
  terminate: finishFields,
  answer: finishFields,
  done: finishFields,
} satisfies Record<string, z.ZodRawShape>;

export type ActionType = keyof typeof actionFields;
export const ACTION_TYPES = Object.keys(actionFields) as ActionType[];

function keyOrKeys(value: { key?: string; keys?: string[] }, ctx: z.RefinementCtx): void {
  if (value.key === undefined && value.keys === undefined) {
    ctx.addIssue({ code: 'custom', path: ['key'], message: 'key is required' });
  }
}

function refine<S extends z.ZodObject>(type: ActionType, schema: S): S {
  if (type === 'drag') return schema.superRefine((v, ctx) => requireDragEnds(v as DragInput, ctx));
  if (type === 'key' || type === 'key_down' || type === 'key_up') {
    return schema.superRefine((v, ctx) => keyOrKeys(v as { key?: string; keys?: string[] }, ctx));
  }
  return schema;
}

function buildActionSchema<T extends ActionType>(type: T) {
  return refine(type, z.object({ ...common, ...actionFields[type], type: z.literal(type) }));
}

export const ACTION_SCHEMAS = Object.fromEntries(
  ACTION_TYPES.map((type) => [type, buildActionSchema(type)]),
) as { [T in ActionType]: ReturnType<typeof buildActionSchema<T>> };

export const ComputerAction = z
  .union(ACTION_TYPES.map((type) => ACTION_SCHEMAS[type]) as unknown as [z.ZodType, ...z.ZodType[]])
  .meta({ id: 'ComputerAction' });

export type ComputerActionOf<T extends ActionType> = z.output<(typeof ACTION_SCHEMAS)[T]>;
export type ComputerAction = { [T in ActionType]: ComputerActionOf<T> }[ActionType];

/** Bodies of the single-action endpoints: the fields of the action without its `type`. */
function endpointBody<T extends ActionType>(type: T) {
  const schema = refine(type, z.object({ ...common, ...actionFields[type] }));
  return {
    type,
    schema,
    toAction: (body: object) => ({ ...body, type }) as ComputerAction,
    /** The body field a param of the action names. */
    toParam: (param: string) => param,
  };
}

/** /debug takes the command's fields at the top level, not under `debug`. */
function debugEndpoint() {
  const schema = z.object({ ...common, ...DebugCommand.shape });
  return {
    type: 'debug' as const,
    schema,
    toAction: ({
      tab_id,
      request_id,
      include_context,
      ...debug
    }: z.output<typeof schema>): ComputerAction => ({
      type: 'debug',
      debug,
      tab_id,
      request_id,
      include_context,
    }),
    toParam: (param: string) => param.replace(/^debug\./, ''),
  };
}

/** Every single-action endpoint: path segment → the action type it performs. */
export const ACTION_ENDPOINTS = {
  click: endpointBody('click'),
  'double-click': endpointBody('double_click'),
  'right-click': endpointBody('right_click'),
  'mouse-down': endpointBody('mouse_down'),
  'mouse-up': endpointBody('mouse_up'),
  drag: endpointBody('drag'),
  scroll: endpointBody('scroll'),
  type: endpointBody('type'),
  hotkey: endpointBody('hotkey'),
  'key-down': endpointBody('key_down'),
  'key-up': endpointBody('key_up'),
  navigate: endpointBody('navigate'),
  screenshot: endpointBody('screenshot'),
  html: endpointBody('get_html_content'),
  viewport: endpointBody('set_viewport'),
  'change-proxy': endpointBody('change_proxy'),
  debug: debugEndpoint(),
} as const;

export const PageContext = z
  .object({
    tab_id: z.string(),
    url: z.string(),
    title: z.string(),
    is_main_tab: z.boolean(),
    viewport_width: z.number(),
    viewport_height: z.number(),
    page_width: z.number(),
    page_height: z.number(),
    scroll_x: z.number(),
    scroll_y: z.number(),
    device_scale_factor: z.number(),
  })
  .meta({ id: 'PageContext' });
export type PageContext = z.infer<typeof PageContext>;

export const ActionResult = z
  .object({
    status: z.enum(['success', 'error']),
    result: z.record(z.string(), z.unknown()),
    error_message: z.string().optional(),
    executed_tab_id: z.string().optional(),
    page_context: PageContext.optional(),
    request_id: z.string(),
    timestamp: Timestamp,
  })
  .meta({ id: 'ActionResult' });
export type ActionResult = z.infer<typeof ActionResult>;

export const MAX_BATCH_ACTIONS = 500;
export const BatchBody = z.object({
  actions: z.array(ComputerAction).max(MAX_BATCH_ACTIONS),
});

export const BatchResult = z
  .object({
    success: z.boolean(),
    results: z.array(ActionResult),
    failed_index: z.number().int().nullable(),
    error_message: z.string().nullable(),
  })
  .meta({ id: 'BatchResult' });
export type BatchResult = z.infer<typeof BatchResult>;

export const ExecuteBody = z.union([z.object({ action: ComputerAction }), ComputerAction]);

export const NewTabBody = z.object({ ...common, url: Url.optional() });
export const TabParams = z.object({ id: z.string(), tab_id: z.string() });
