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

/** The fields of an action type's body: its own, then the common ones it does not redefine. */
type BodyShape<T extends ActionType> = Omit<typeof common, keyof (typeof actionFields)[T]> &
  (typeof actionFields)[T];
type ActionShape<T extends ActionType> = BodyShape<T> & { type: z.ZodLiteral<T> };

function bodySchema<T extends ActionType>(type: T): z.ZodObject<BodyShape<T>, z.core.$strip> {
  return refine(type, z.object({ ...common, ...actionFields[type] })) as unknown as z.ZodObject<
    BodyShape<T>,
    z.core.$strip
  >;
}

export const ACTION_SCHEMAS = Object.fromEntries(
  ACTION_TYPES.map((type) => [
    type,
    refine(type, z.object({ ...common, ...actionFields[type], type: z.literal(type) })),
  ]),
) as { [T in ActionType]: z.ZodObject<ActionShape<T>, z.core.$strip> };

const ACTION_OPTIONS = ACTION_TYPES.map((type) => ACTION_SCHEMAS[type]) as unknown as [
  (typeof ACTION_SCHEMAS)[ActionType],
  ...(typeof ACTION_SCHEMAS)[ActionType][],
];

/** Any action, chosen by its `type`; an unknown or missing type is answered with the known ones. */
export const ComputerAction = z
  .discriminatedUnion('type', ACTION_OPTIONS, {
    error: (issue) => {
      if (issue.code !== 'invalid_union') return undefined;
      const type = (issue.input as { type?: unknown } | undefined)?.type;
      const what =
        typeof type === 'string' ? `unknown action type "${type}"` : 'the action type is required';
      return `${what}; known types: ${ACTION_TYPES.join(', ')}`;
    },
  })
  .meta({ id: 'ComputerAction' });

export type ComputerActionOf<T extends ActionType> = z.output<(typeof ACTION_SCHEMAS)[T]>;
export type ComputerAction = { [T in ActionType]: ComputerActionOf<T> }[ActionType];

/** Bodies of the single-action endpoints: the fields of the action without its `type`. */
function endpointBody<T extends ActionType>(type: T) {
  return { type, body: bodySchema(type) };
}

/** /debug takes the command's fields at the top level, not under `debug`. */
export const DebugEndpointBody = z.object({ ...common, ...DebugCommand.shape });

/** Every single-action endpoint: path segment → the action type it performs and its body. */
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
  debug: { type: 'debug' as const, body: DebugEndpointBody },
} as const;
export type ActionEndpoint = keyof typeof ACTION_ENDPOINTS;

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

// ---- Results ----------------------------------------------------------------------------------

/** The result of an action that reports nothing but its success. */
export const EmptyResult = z.strictObject({}).meta({ id: 'EmptyResult' });

export const ScreenshotResult = z
  .object({
    screenshot_url: z
      .string()
      .describe(
        'An http URL on this server, fetchable without a key; a data: URL when base64 was asked for.',
      ),
    width: z.number().int(),
    height: z.number().int(),
    base64: z.string().optional().describe('The PNG, base64, when the action asked for it.'),
  })
  .meta({ id: 'ScreenshotResult' });

export const NavigateResult = z
  .object({ url: z.string().describe('Where the tab ended up.'), title: z.string() })
  .meta({ id: 'NavigateResult' });

export const HtmlResult = z
  .object({ html_content: z.string(), url: z.string(), title: z.string() })
  .meta({ id: 'HtmlResult' });

export const ViewportResult = z
  .object({ width: z.number().int(), height: z.number().int(), scale_factor: z.number() })
  .meta({ id: 'ViewportResult' });

export const ChangeProxyResult = z
  .object({
    proxy_url: z.string().describe('The proxy now in use, its password masked; empty: direct.'),
    page_state_reloaded: z.boolean().optional(),
  })
  .meta({ id: 'ChangeProxyResult' });

export const Tab = z
  .object({
    tab_id: z.string(),
    id: z.string().describe('Equal to tab_id.'),
    url: z.string(),
    title: z.string(),
    is_main: z.boolean(),
  })
  .meta({ id: 'Tab' });
export type Tab = z.infer<typeof Tab>;

export const TabsResult = z
  .object({ tabs: z.array(Tab).describe('In opening order.') })
  .meta({ id: 'TabsResult' });
export const NewTabResult = z.object({ created_tab_id: z.string() }).meta({ id: 'NewTabResult' });
export const SwitchTabResult = z.object({ active_tab: z.string() }).meta({ id: 'SwitchTabResult' });
export const CloseTabResult = z.object({ closed_tab: z.string() }).meta({ id: 'CloseTabResult' });

export const DebugResult = z
  .object({
    debug_response: z.string().describe('stdout followed by stderr, cut at max_output_length.'),
    stdout: z.string(),
    stderr: z.string(),
    exit_code: z.number().int().describe('-1 when the command was killed (timeout).'),
  })
  .meta({ id: 'DebugResult' });

export const FinishResult = z
  .object({ status: z.string().optional(), result: z.string().optional() })
  .meta({ id: 'FinishResult' });

/** What `result` holds when each action type succeeds. */
export const ACTION_RESULTS = {
  click: EmptyResult,
  double_click: EmptyResult,
  triple_click: EmptyResult,
  right_click: EmptyResult,
  mouse_down: EmptyResult,
  mouse_up: EmptyResult,
  move: EmptyResult,
  drag: EmptyResult,
  scroll: EmptyResult,
  hscroll: EmptyResult,
  type: EmptyResult,
  point_and_type: EmptyResult,
  keypress: EmptyResult,
  key: EmptyResult,
  hotkey: EmptyResult,
  key_down: EmptyResult,
  key_up: EmptyResult,
  wait: EmptyResult,
  screenshot: ScreenshotResult,
  go_to_url: NavigateResult,
  navigate: NavigateResult,
  get_html_content: HtmlResult,
  set_viewport: ViewportResult,
  change_proxy: ChangeProxyResult,
  list_tabs: TabsResult,
  new_tab: NewTabResult,
  switch_tab: SwitchTabResult,
  close_tab: CloseTabResult,
  debug: DebugResult,
  terminate: FinishResult,
  answer: FinishResult,
  done: FinishResult,
} as const satisfies Record<ActionType, z.ZodType>;

/**
 * The result of some action, whichever it was (/execute, /batch): the fields of that type's
 * result, so each field is present only for the types that report it.
 */
export const AnyActionData = z
  .object({
    ...ScreenshotResult.shape,
    ...NavigateResult.shape,
    ...HtmlResult.shape,
    ...ViewportResult.shape,
    ...ChangeProxyResult.shape,
    ...TabsResult.shape,
    ...NewTabResult.shape,
    ...SwitchTabResult.shape,
    ...CloseTabResult.shape,
    ...DebugResult.shape,
    ...FinishResult.shape,
  })
  .partial()
  .meta({ id: 'AnyActionData' });

const resultFields = {
  executed_tab_id: z.string().optional(),
  page_context: PageContext.optional(),
  request_id: z.string(),
  timestamp: Timestamp,
};

/** An action that failed because of the computer's state: a 200 with status "error". */
export const ActionFailed = z
  .object({
    status: z.literal('error'),
    result: z.object({}).describe('Empty.'),
    error_message: z.string(),
    ...resultFields,
  })
  .meta({ id: 'ActionFailed' });

const succeededFields = {
  status: z.literal('success'),
  error_message: z.undefined().optional().describe('Absent: the action succeeded.'),
  ...resultFields,
};
type ActionSucceeded<R extends z.ZodType> = z.ZodObject<
  typeof succeededFields & { result: R },
  z.core.$strip
>;

/** The answer of an action whose success carries `result`. */
export function actionResultOf<R extends z.ZodType>(
  result: R,
): z.ZodUnion<[ActionSucceeded<R>, typeof ActionFailed]> {
  return z.union([z.object({ ...succeededFields, result }), ActionFailed]);
}

export const ActionResult = actionResultOf(AnyActionData).meta({ id: 'ActionResult' });
export type ActionResult = z.infer<typeof ActionResult>;

/** The answer of each action type, its result typed. */
export const ACTION_ANSWERS = Object.fromEntries(
  ACTION_TYPES.map((type) => [type, actionResultOf(ACTION_RESULTS[type])]),
) as {
  [T in ActionType]: z.ZodUnion<[ActionSucceeded<(typeof ACTION_RESULTS)[T]>, typeof ActionFailed]>;
};
export type ActionResultOf<T extends ActionType> = z.infer<(typeof ACTION_ANSWERS)[T]>;

export const MAX_BATCH_ACTIONS = 500;
export const BatchBody = z
  .object({
    actions: z
      .array(ComputerAction)
      .max(MAX_BATCH_ACTIONS, `a batch holds at most ${MAX_BATCH_ACTIONS} actions`),
  })
  .meta({ id: 'BatchBody' });

export const BatchResult = z
  .object({
    success: z.boolean(),
    results: z.array(ActionResult),
    failed_index: z.number().int().nullable(),
    error_message: z.string().nullable(),
  })
  .meta({ id: 'BatchResult' });
export type BatchResult = z.infer<typeof BatchResult>;

/** /execute takes `{action}`, or the action itself at the top level. */
export const ExecuteBody = z
  .union([ComputerAction, z.object({ action: ComputerAction })])
  .meta({ id: 'ExecuteBody' });

export const NewTabBody = z.object({ ...common, url: Url.optional() });
