import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentTurns,
  DESKTOP_TASKS,
  healTurns,
  startFormPages,
  writeScript,
} from '../helpers/replay-fixtures.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Runs as scripts (docs/API.md §18) on a desktop: five tasks click and type in a form page shown
 * by the desktop's own browser window, at screen pixels. A replay checks the look of the screen
 * around each point; after the page changed (its button moved) that step is healed with one
 * model call, or the replay fails naming it.
 */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-replay-desktop-'));
let server: TestServer;
let pages: Awaited<ReturnType<typeof startFormPages>>;
let desktop: string;
/** Where the page's pixel 0,0 is on the desktop's screen (below the browser's toolbars). */
let offset: { x: number; y: number };
const runs = new Map<string, string>();

const BUTTON = [0x22, 0x55, 0xcc];

/** The screen position of the first pixel of the button's colour: the button's top-left. */
async function buttonOnScreen(computer: string): Promise<{ x: number; y: number } | undefined> {
  const shot = await server.request('POST', `/computers/${computer}/screenshot`, { base64: true });
  const { data, info } = await sharp(Buffer.from(shot.body.result.base64 as string, 'base64'))
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  for (let i = 0; i < data.length; i += 3) {
    if (data[i] === BUTTON[0] && data[i + 1] === BUTTON[1] && data[i + 2] === BUTTON[2]) {
      const pixel = i / 3;
      return { x: pixel % info.width, y: Math.floor(pixel / info.width) };
    }
  }
  return undefined;
}

beforeAll(async () => {
  pages = await startFormPages(DESKTOP_TASKS);
  // Each model's script is written once the page's place on the screen is known (read per call).
  const providers = Object.fromEntries(
    DESKTOP_TASKS.map((t) => [
      t.name,
      { provider: 'scripted' as const, script: join(scripts, `${t.name}.json`) },
    ]),
  );
  server = await startTestServer({
    browser: { warm_pool: 0 },
    limits: { desktops_per_org: 2 },
    models: { default: DESKTOP_TASKS[0]!.name, providers },
  });
  const created = await server.request('POST', '/computers', { kind: 'desktop', recording: false });
  expect(created.status, created.text).toBe(200);
  desktop = created.body.id as string;
  // The browser window's toolbars sit above the page: find the page's origin by its button.
  const first = DESKTOP_TASKS[0]!;
  await server.request('POST', `/computers/${desktop}/navigate`, {
    url: `${pages.url}/${first.name}`,
  });
  const found = await eventually(() => buttonOnScreen(desktop), 30_000);
  offset = { x: found.x - first.page.button!.x, y: found.y - first.page.button!.y };
  for (const t of DESKTOP_TASKS) writeScript(scripts, t.name, agentTurns(t, pages.url, { offset }));
}, 120_000);
afterAll(async () => {
  await server?.close();
  await pages?.close();
});

type Task = { task_id: string; status: string; error: string | null };
const finished = (id: string) =>
  eventually(async () => {
    const current = await server.request('GET', `/agent/tasks/${id}`);
    return current.body.exit_code !== null && (current.body as Task);
  }, 120_000);
const modelCalls = async (id: string) =>
  ((await server.request('GET', `/v1/usage?task_id=${id}`)).body.data as unknown[]).length;
const sent = async () => {
  const html = (await server.request('POST', `/computers/${desktop}/html`, {})).body.result
    .html_content as string;
  return /<p id="out"[^>]*>([^<]*)<\/p>/.exec(html)?.[1] ?? null;
};
/** What the field holds now (the page mirrors it into an attribute): says a key came late or never. */
const field = async () => {
  const html = (await server.request('POST', `/computers/${desktop}/html`, {})).body.result
    .html_content as string;
  return /data-now="([^"]*)"/.exec(html)?.[1] ?? null;
};
async function replay(of: string, heal: boolean) {
  const started = await server.request('POST', `/agent/tasks/${of}/replay`, {
    computer_id: desktop,
    heal,
  });
  expect(started.status, started.text).toBe(200);
  const task = await finished(started.body.task_id as string);
  // The last click reaches the page through X after the action answered: wait for its effect.
  const done = task.status === 'completed';
  const shown = done ? await eventually(sent, 10_000).catch(() => sent()) : await sent();
  return { task, shown };
}

describe('desktop tasks', () => {
  it('five tasks run by the scripted model are replayed with no model call, checked by the look of the screen', async () => {
    let replayed = 0;
    for (const t of DESKTOP_TASKS) {
      const started = await server.request('POST', '/agent/tasks', {
        instruction: `Send "${t.text}" with the form`,
        kind: 'desktop',
        model: t.name,
        computer_id: desktop,
      });
      expect(started.status, started.text).toBe(200);
      const run = await finished(started.body.task_id as string);
      expect(run.status, `${t.name}: ${run.error}`).toBe('completed');
      const shown = await eventually(sent, 10_000);
      runs.set(t.name, run.task_id);
      const events = (
        await (
          await SseReader.open(`${server.url}/agent/tasks/${run.task_id}/events`, server.key)
        ).all()
      ).map((event) => event.data as Record<string, any>);
      const failed = events.filter((e) => e.type === 'action_result' && e.status === 'error');
      expect(
        shown,
        `the field holds ${await field()}; failed actions: ${JSON.stringify(failed)}`,
      ).toBe(`sent: ${t.text}`);
      const clicks = events.filter((e) => e.type === 'action' && e.action.type === 'click');
      for (const click of clicks) expect(click.check.region_hash).toMatch(/^[0-9a-f]{18}$/);

      const again = await replay(run.task_id, true);
      if (
        again.task.status === 'completed' &&
        again.shown === `sent: ${t.text}` &&
        (await modelCalls(again.task.task_id)) === 0
      ) {
        replayed += 1;
      }
    }
    // At least 95 % of replays succeed with no model call: with five, all of them.
    expect(replayed / DESKTOP_TASKS.length).toBeGreaterThanOrEqual(0.95);
  }, 600_000);

  it('after the button moved, a replay without healing fails naming the step; with healing, one model call repairs it', async () => {
    for (const t of DESKTOP_TASKS) pages.changed.add(t.name);
    const first = DESKTOP_TASKS[0]!;
    const failed = await replay(runs.get(first.name)!, false);
    expect(failed.task.status).toBe('failed');
    expect(failed.task.error).toMatch(
      /^step 4 \(click at \d+, \d+\) no longer fits the screen: the screen around the point looks different/,
    );
    expect(failed.shown).toBe('');

    for (const t of DESKTOP_TASKS) {
      writeScript(scripts, t.name, healTurns(t, offset));
      const healed = await replay(runs.get(t.name)!, true);
      expect(healed.task.status, `${t.name}: ${healed.task.error}`).toBe('completed');
      expect(healed.shown).toBe(`sent: ${t.text}`);
      expect(await modelCalls(healed.task.task_id)).toBe(1);

      const again = await replay(healed.task.task_id, false);
      expect(again.task.status, `${t.name}: ${again.task.error}`).toBe('completed');
      expect(again.shown).toBe(`sent: ${t.text}`);
      expect(await modelCalls(again.task.task_id)).toBe(0);
    }
  }, 600_000);
});
