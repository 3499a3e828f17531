/** Requests the main process sends to a desktop worker, and their answers. */
export type WorkerButton = 'left' | 'right' | 'middle';
export type Point = { x: number; y: number };

export type WorkerRequest =
  | { op: 'click'; at: Point; button: WorkerButton; count: number }
  | { op: 'press'; at: Point; button: WorkerButton; down: boolean }
  | { op: 'move'; at: Point }
  | { op: 'drag'; path: Point[] }
  | { op: 'scroll'; at: Point; dx: number; dy: number }
  | { op: 'keys'; keys: string[]; mode: 'tap' | 'down' | 'up' }
  | { op: 'type'; text: string }
  | { op: 'screenshot' }
  | { op: 'frame'; quality: number; maxWidth?: number }
  | { op: 'size' }
  | { op: 'cursor' };

export type WorkerMessage = { id: number; request: WorkerRequest };
export type WorkerAnswer =
  { id: number; ok: true; result: unknown } | { id: number; ok: false; error: string };
