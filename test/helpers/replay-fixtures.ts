import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

/**
 * The fixture suite of runs as scripts: small form pages, one per task, each as it was when its
 * task ran and as it is after a change (its button moved, or its field renamed). A page shows
 * what was sent in #out (and as its title), so a test reads the outcome off the page.
 */

type Point = { x: number; y: number };
export type FormPage = {
  label: string;
  /** Top-left of the field (220×30) and of the button (140×40), page pixels. */
  field: Point;
  button: Point | null;
  buttonText: string;
};
export type Change = 'moved' | 'renamed';

export type ReplayTask = {
  name: string;
  kind: 'browser' | 'desktop';
  /** The text typed into the field: the page then shows `sent: <text>`. */
  text: string;
  page: FormPage;
  /** The page after the change, and which change it is. */
  changed: FormPage;
  change: Change;
};

export const fieldPoint = (page: FormPage): Point => ({
  x: page.field.x + 110,
  y: page.field.y + 15,
});
export const buttonPoint = (page: FormPage): Point => ({
  x: page.button!.x + 70,
  y: page.button!.y + 20,
});

const LABELS = ['Email', 'Name', 'City', 'Order number', 'Coupon'];
const RENAMED = ['E-mail address', 'Full name', 'Town', 'Order id', 'Voucher code'];

/** Task `i` of a kind: positions, labels and texts differ from task to task. */
function task(i: number, kind: 'browser' | 'desktop'): ReplayTask {
  const label = LABELS[i % LABELS.length]!;
  const field = { x: 40 + (i % 5) * 60, y: 80 + (i % 4) * 40 };
  // Every fourth browser task sends with Enter: its page has no button.
  const byEnter = kind === 'browser' && i % 4 === 3;
  const button = byEnter ? null : { x: field.x + 320, y: field.y + 120 };
  const page: FormPage = { label, field, button, buttonText: i % 2 ? 'Send' : 'Submit' };
  const change: Change = kind === 'desktop' || (!byEnter && i % 2 === 0) ? 'moved' : 'renamed';
  const changed: FormPage =
    change === 'moved'
      ? { ...page, button: { x: button!.x + 360, y: button!.y + 140 } }
      : { ...page, label: RENAMED[i % RENAMED.length]! };
  return { name: `${kind}-${i}`, kind, text: `replay ${kind} ${i} ✓`, page, changed, change };
}

export const BROWSER_TASKS = Array.from({ length: 20 }, (_, i) => task(i, 'browser'));
export const DESKTOP_TASKS = Array.from({ length: 5 }, (_, i) => task(i, 'desktop'));

function html(page: FormPage): string {
  const button = page.button
    ? `<button id="send" style="left:${page.button.x}px;top:${page.button.y}px">${page.buttonText}</button>`
    : '';
  return `<!doctype html>
<html><head><title>form</title><style>
  body { margin: 0; font: 16px sans-serif; background: #fff; }
  label, input, button, #out { position: absolute; }
  input { width: 220px; height: 30px; box-sizing: border-box; }
  button { width: 140px; height: 40px; background: #2255cc; color: #fff; border: 0; font-size: 18px; }
</style></head><body>
<form id="form">
  <label for="value" style="left:${page.field.x}px;top:${page.field.y - 24}px">${page.label}</label>
  <input id="value" style="left:${page.field.x}px;top:${page.field.y}px" autocomplete="off"
    oninput="this.dataset.now = this.value">
  ${button}
</form>
<p id="out" style="left:20px;top:600px"></p>
<script>
  document.getElementById('form').addEventListener('submit', (event) => {
    event.preventDefault();
    const text = 'sent: ' + document.getElementById('value').value;
    document.getElementById('out').textContent = text;
    document.title = text;
  });
</script>
</body></html>`;
}

/** Serves /<task name> as the task's page, changed or not (`changed` says which tasks are). */
export async function startFormPages(
  tasks: readonly ReplayTask[],
): Promise<{ url: string; changed: Set<string>; close(): Promise<void> }> {
  const changed = new Set<string>();
  const byName = new Map(tasks.map((t) => [t.name, t]));
  const server: Server = createServer((req, res) => {
    const name = new URL(req.url!, 'http://x').pathname.slice(1);
    const found = byName.get(name);
    if (!found) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(html(changed.has(name) ? found.changed : found.page));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    changed,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The scripted model's turns for a task: go to its page, click the field, type, send (click
 * the button, or Enter), then say it is done. `offset`: where the page's pixel 0,0 is on the
 * screen (a desktop's browser window has its toolbars above the page). `turnEach`: one action
 * per model turn, as a model looking at each screen does; else all four in one turn (quicker).
 */
export function agentTurns(
  t: ReplayTask,
  url: string,
  options: { offset?: Point; turnEach?: boolean } = {},
): unknown[] {
  const { offset = { x: 0, y: 0 }, turnEach = false } = options;
  const at = (p: Point) => ({ x: p.x + offset.x, y: p.y + offset.y });
  const actions = [
    { type: 'navigate', url: `${url}/${t.name}` },
    { type: 'click', ...at(fieldPoint(t.page)) },
    { type: 'type', text: t.text },
    t.page.button
      ? { type: 'click', ...at(buttonPoint(t.page)) }
      : { type: 'keypress', keys: ['Enter'] },
  ];
  const calls = actions.map((action) => ({ type: 'computer_call', action }));
  return [
    ...(turnEach ? calls.map((item) => ({ output: [item] })) : [{ output: calls }]),
    { output: [{ type: 'message', text: `Sent ${t.text}.` }] },
  ];
}

/** What the model answers when asked to heal the changed step: the element where it is now. */
export function healTurns(t: ReplayTask, offset: Point = { x: 0, y: 0 }): unknown[] {
  const target = t.change === 'moved' ? buttonPoint(t.changed) : fieldPoint(t.changed);
  const action = { type: 'click', x: target.x + offset.x, y: target.y + offset.y };
  return [{ output: [{ type: 'computer_call', action }] }];
}

/** Writes a scripted model's file (read on every call, so a test can rewrite it between runs). */
export function writeScript(dir: string, name: string, turns: unknown[], delayMs = 0): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify({ delay_ms: delayMs, turns }));
  return path;
}
