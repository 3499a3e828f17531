import type { DebugCommand } from '../../../shared/actions.js';
import type { Key } from '../keyboard/key-names.js';

export type Point = { x: number; y: number };
export type MouseButton = 'left' | 'right' | 'middle' | 'back' | 'forward';

/** The one internal action set every operator implements (aliases already resolved). */
export type Action =
  | { type: 'click'; at: Point; button: MouseButton; count: 1 | 2 | 3 }
  | { type: 'mouse_down' | 'mouse_up'; at: Point; button: MouseButton }
  | { type: 'move'; at: Point }
  | { type: 'drag'; path: Point[] }
  | { type: 'scroll'; at: Point; dx: number; dy: number }
  | { type: 'type'; text: string }
  | { type: 'point_and_type'; at: Point; text: string }
  | { type: 'keypress'; keys: Key[] }
  | { type: 'key_down' | 'key_up'; key: Key }
  | { type: 'wait'; ms: number }
  | { type: 'screenshot'; base64: boolean }
  | { type: 'navigate'; url: string }
  | { type: 'html' }
  | { type: 'viewport'; width: number; height: number; scale?: number }
  | { type: 'change_proxy'; proxyUrl: string }
  | { type: 'list_tabs' }
  | { type: 'new_tab'; url?: string }
  | { type: 'switch_tab'; tabId: string }
  | { type: 'close_tab'; tabId: string }
  | { type: 'debug'; command: DebugCommand }
  /** The model said the task is over (terminate, answer, done): nothing is performed. */
  | { type: 'finish'; signal: 'terminate' | 'answer' | 'done'; status?: string; result?: string };

export type ActionName = Action['type'];

/** An action with what every request may say about it. */
export type ActionRequest = {
  action: Action;
  tabId?: string;
  requestId: string;
  includeContext: boolean;
  /** Aborted when whoever asked stops waiting (a cancelled task, a closed request): waits and navigations end. */
  signal?: AbortSignal;
  /** A request the SDK re-sent (x-stainless-retry-count > 0): a shell command joins its first run. */
  retried?: boolean;
  /** A person sent it from the window's live view. */
  source?: 'live_view';
  /** Who sent it, as a person reads it ("Python SDK 2.39.0 (key sk_5bRW…)"); its approval says so. */
  requester?: string;
  /** The agent task that sent it (policies with task_only; its approvals name the task). */
  taskId?: string;
};

/** What an operator reports for a successful action. */
export type ActionOutcome = {
  result: Record<string, unknown>;
  executedTabId?: string;
};
