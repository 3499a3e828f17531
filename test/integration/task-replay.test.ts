import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentTurns,
  BROWSER_TASKS,
  healTurns,
  startFormPages,
  writeScript,
  type ReplayTask,
} from '../helpers/replay-fixtures.js';
import { SseReader } from '../helpers/sse.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Runs as scripts (docs/API.md §18), browser side: twenty tasks run by the scripted model and
 * replayed without it; then their pages change (a button moved, a field renamed) and replays
 * heal the step that no longer fits with one model call, or fail naming it.
 */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-replay-'));
let server: TestServer;
let pages: Awaited<ReturnType<typeof startFormPages>>;
/** The agent run of each task, by task name. */
const runs = new Map<string, string>();
const SECRET = 'hunter2-never-shown';

/** A task that types a secret from the vault into the first task's field. */
function secretScript(): string {
  const t = BROWSER_TASKS[0]!;
  const [navigate, ...rest] = agentTurns(t, pages.url) as Array<{ output: any[] }>;
  const actions = navigate!.output.map((item) =>
    item.action.type === 'type'
      ? { ...item, action: { type: 'type', text: '{{secret:FORM_PW}}' } }
      : item,
  );
  return writeScript(scripts, 'secret', [{ output: actions }, ...rest]);
}

const STANDIN = resolve(import.meta.dirname, '../fixtures/lightcone-standin');
const run = promisify(execFile);

/**
 * Runs an exported script as a user would, with the SDK's environment variables, against the
 * test server (COMPUTER_ID: on that computer); the SDK is the test-only stand-in.
 */
async function runScript(lang: 'python' | 'typescript', source: string, computer: string) {
  const dir = mkdtempSync(join(tmpdir(), 'benchtop-script-'));
  const env = {
    ...process.env,
    LIGHTCONE_BASE_URL: server.url,
    TZAFON_API_KEY: server.key,
    COMPUTER_ID: computer,
    PYTHONPATH: join(STANDIN, 'python'),
  };
  let file = join(dir, 'replay.py');
  let command = ['python3', file];
  if (lang === 'typescript') {
    mkdirSync(join(dir, 'node_modules', '@tzafon'), { recursive: true });
    symlinkSync(join(STANDIN, 'typescript'), join(dir, 'node_modules', '@tzafon', 'lightcone'));
    file = join(dir, 'replay.ts');
    command = [resolve(import.meta.dirname, '../../node_modules/.bin/tsx'), file];
  }
  writeFileSync(file, source);
  return run(command[0]!, command.slice(1), { cwd: dir, env, timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
    }),
  );
}

const script = async (id: string, lang: 'python' | 'typescript') => {
  const answer = await server.request('GET', `/agent/tasks/${id}/script?lang=${lang}`);
  expect(answer.status, answer.text).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^text\/plain/);
  return answer.text;
};

beforeAll(async () => {
  pages = await startFormPages(BROWSER_TASKS);
  const providers = Object.fromEntries(
    BROWSER_TASKS.map((t) => [
      t.name,
      {
        provider: 'scripted' as const,
        script: writeScript(scripts, t.name, agentTurns(t, pages.url)),
      },
    ]),
  );
  server = await startTestServer({
    models: {
      default: BROWSER_TASKS[0]!.name,
      providers: { ...providers, secret: { provider: 'scripted', script: secretScript() } },
    },
    browser: { warm_pool: 2 },
  });
});
afterAll(async () => {
  await server?.close();
  await pages?.close();
});

type Task = { task_id: string; status: string; error: string | null; replay_of: string | null };

const finished = (id: string) =>
  eventually(async () => {
    const current = await server.request('GET', `/agent/tasks/${id}`);
    return current.body.exit_code !== null && (current.body as Task);
  }, 60_000);
const events = async (id: string) =>
  (await (await SseReader.open(`${server.url}/agent/tasks/${id}/events`, server.key)).all()).map(
    (event) => event.data as Record<string, any>,
  );
/** Model calls the ledger holds for a task. */
const modelCalls = async (id: string) =>
  ((await server.request('GET', `/v1/usage?task_id=${id}`)).body.data as unknown[]).length;
const newComputer = async () => {
  const created = await server.request('POST', '/computers', { recording: false });
  expect(created.status, created.text).toBe(200);
  return created.body.id as string;
};
/** What the page of a computer shows in #out. */
const sent = async (computer: string) => {
  const html = (await server.request('POST', `/computers/${computer}/html`, {})).body.result
    .html_content as string;
  return /<p id="out"[^>]*>([^<]*)<\/p>/.exec(html)?.[1] ?? null;
};

/** Replays a task on `computer` (a new one when not given); the replay and what its page shows. */
async function replay(of: string, heal: boolean, on?: string) {
  const computer = on ?? (await newComputer());
  const started = await server.request('POST', `/agent/tasks/${of}/replay`, {
    computer_id: computer,
    heal,
  });
  expect(started.status, started.text).toBe(200);
  expect(started.body).toMatchObject({ status: 'running', computer_id: computer });
  const done = await finished(started.body.task_id as string);
  const shown = await sent(computer);
  if (!on) await server.request('DELETE', `/computers/${computer}`);
  return { task: done, shown };
}

/**
 * Runs `work` over the tasks, a few at a time, each worker on a computer of its own (every
 * task starts by loading its page, so it does not matter what the previous one left).
 */
async function forEachTask<T>(
  tasks: readonly ReplayTask[],
  work: (t: ReplayTask, computer: string) => Promise<T>,
): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    const computer = await newComputer();
    while (next < tasks.length) {
      const index = next++;
      results[index] = await work(tasks[index]!, computer);
    }
    await server.request('DELETE', `/computers/${computer}`);
  };
  await Promise.all([worker(), worker(), worker()]);
  return results;
}

describe('unchanged pages', () => {
  it('twenty tasks run by the scripted model are replayed with no model call, the pages showing the same', async () => {
    const outcomes = await forEachTask(BROWSER_TASKS, async (t, computer) => {
      const started = await server.request('POST', '/agent/tasks', {
        instruction: `Send "${t.text}" with the form`,
        model: t.name,
        computer_id: computer,
      });
      expect(started.status, started.text).toBe(200);
      const run = await finished(started.body.task_id as string);
      expect(run.status, `${t.name}: ${run.error}`).toBe('completed');
      expect(await sent(computer)).toBe(`sent: ${t.text}`);
      runs.set(t.name, run.task_id);

      const replayed = await replay(run.task_id, true, computer);
      return {
        name: t.name,
        ok:
          replayed.task.status === 'completed' &&
          replayed.shown === `sent: ${t.text}` &&
          (await modelCalls(replayed.task.task_id)) === 0,
        replayed,
      };
    });
    const failed = outcomes.filter((outcome) => !outcome.ok);
    // The issue's bar: at least 95 % of replays succeed with no model call.
    expect(
      (outcomes.length - failed.length) / outcomes.length,
      JSON.stringify(failed.map(({ name, replayed }) => ({ name, ...replayed }))),
    ).toBeGreaterThanOrEqual(0.95);
    for (const { replayed } of outcomes.slice(0, 1)) {
      expect(replayed.task.replay_of).toBe(runs.get(BROWSER_TASKS[0]!.name));
    }
  }, 600_000);
});

describe('exported scripts', () => {
  it('read as SDK calls, each after its check, and run unchanged against Benchtop in both languages', async () => {
    const byButton = BROWSER_TASKS[0]!;
    const python = await script(runs.get(byButton.name)!, 'python');
    expect(python).toContain('from tzafon import Lightcone');
    expect(python).toContain(
      `client.computers.navigate(computer_id, url="${pages.url}/${byButton.name}")`,
    );
    expect(python).toMatch(
      /check\(computer_id, "step 2 \(click at 150, 95\)", url="[^"]+", text="Email", region_hash="[0-9a-f]{18}", x=150, y=95\)/,
    );
    expect(python).toMatch(
      /check\(computer_id, "step 4 \(click at 430, 220\)", url="[^"]+", text="Submit", region_hash="[0-9a-f]{18}", x=430, y=220\)/,
    );
    const typescript = await script(runs.get(byButton.name)!, 'typescript');
    expect(typescript).toContain("import Lightcone from '@tzafon/lightcone';");
    expect(typescript).toContain('await client.computers.click(computerId, { x: 430, y: 220 })');

    for (const [t, lang] of [
      [byButton, 'python'],
      [BROWSER_TASKS[3]!, 'typescript'],
    ] as const) {
      const computer = await newComputer();
      const ran = await runScript(lang, await script(runs.get(t.name)!, lang), computer);
      expect(ran, `${t.name} ${lang}`).toMatchObject({ code: 0 });
      expect(ran.stdout).toContain('replayed 4 step(s)');
      expect(await sent(computer)).toBe(`sent: ${t.text}`);
      await server.request('DELETE', `/computers/${computer}`);
    }
  }, 300_000);

  it('keep a secret as its placeholder: no script, replay or event holds its value', async () => {
    expect(
      (await server.request('POST', '/secrets', { name: 'FORM_PW', value: SECRET })).status,
    ).toBe(200);
    const computer = await newComputer();
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Sign in',
      model: 'secret',
      computer_id: computer,
    });
    const done = await finished(started.body.task_id as string);
    expect(done.status, done.error ?? '').toBe('completed');
    for (const lang of ['python', 'typescript'] as const) {
      const text = await script(done.task_id, lang);
      expect(text).toContain(
        'text="{{secret:FORM_PW}}"'.replace('text=', lang === 'python' ? 'text=' : 'text: '),
      );
      expect(text).not.toContain(SECRET);
    }
    const replayed = await replay(done.task_id, false);
    expect(replayed.task.status, replayed.task.error ?? '').toBe('completed');
    const all = JSON.stringify([
      ...(await events(done.task_id)),
      ...(await events(replayed.task.task_id)),
      replayed,
    ]);
    expect(all).toContain('{{secret:FORM_PW}}');
    expect(all).not.toContain(SECRET);
    await server.request('DELETE', `/computers/${computer}`);
  }, 120_000);

  it('answer bad requests with a 4xx saying what is wrong', async () => {
    const id = runs.get(BROWSER_TASKS[0]!.name)!;
    const lang = await server.request('GET', `/agent/tasks/${id}/script?lang=java`);
    expect(lang.status).toBe(400);
    expect(lang.body).toMatchObject({ code: 'invalid_request', param: 'lang' });
    expect((await server.request('GET', '/agent/tasks/task_unknown000/script')).status).toBe(404);
    expect((await server.request('POST', '/agent/tasks/task_unknown000/replay', {})).status).toBe(
      404,
    );
    const heal = await server.request('POST', `/agent/tasks/${id}/replay`, { heal: 'yes' });
    expect(heal.status).toBe(400);
    expect(heal.body.param).toBe('heal');
    const elsewhere = await server.request('POST', `/agent/tasks/${id}/replay`, {
      computer_id: 'comp_unknown000',
    });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.param).toBe('computer_id');

    // A task still running has nothing settled to repeat.
    const slow = writeScript(scripts, BROWSER_TASKS[1]!.name, [
      { output: [{ type: 'computer_call', action: { type: 'wait', ms: 60_000 } }] },
    ]);
    void slow;
    const running = await server.request('POST', '/agent/tasks', {
      instruction: 'wait',
      model: BROWSER_TASKS[1]!.name,
    });
    const busy = running.body.task_id as string;
    const refused = await server.request('GET', `/agent/tasks/${busy}/script`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/is running; only a finished task/);
    expect((await server.request('POST', `/agent/tasks/${busy}/replay`, {})).status).toBe(400);
    await server.request('POST', `/agent/tasks/${busy}/cancel`);
    await finished(busy);
    // A task that performed nothing has nothing to replay.
    const nothing = await server.request('POST', `/agent/tasks/${busy}/replay`, {});
    expect(nothing.status).toBe(400);
    expect(nothing.body.message).toMatch(/performed no action/);
  }, 120_000);
});

describe('changed pages', () => {
  beforeAll(() => {
    for (const t of BROWSER_TASKS) pages.changed.add(t.name);
  });

  it('a replay without healing fails at the first step that no longer fits, naming it', async () => {
    const moved = BROWSER_TASKS[0]!;
    const renamed = BROWSER_TASKS[1]!;
    expect([moved.change, renamed.change]).toEqual(['moved', 'renamed']);
    const first = await replay(runs.get(moved.name)!, false);
    expect(first.task.status).toBe('failed');
    expect(first.task.error).toMatch(
      /^step 4 \(click at 430, 220\) no longer fits the screen: under the point is .*, the run had button "Submit"$/,
    );
    expect(first.shown).toBe('');
    const second = await replay(runs.get(renamed.name)!, false);
    expect(second.task.error).toMatch(
      /^step 2 \(click at \d+, \d+\) no longer fits the screen: under the point is text field "Full name", the run had text field "Name"$/,
    );
    expect(await modelCalls(first.task.task_id)).toBe(0);
    expect(await modelCalls(second.task.task_id)).toBe(0);
  }, 120_000);

  it('each moved button or renamed field is healed with one model call; the healed replay then replays with none', async () => {
    const outcomes = await forEachTask(BROWSER_TASKS, async (t, computer) => {
      // What the model, shown the changed page, answers: the element where it is now.
      writeScript(scripts, t.name, healTurns(t));
      const healed = await replay(runs.get(t.name)!, true, computer);
      expect(healed.task.status, `${t.name}: ${healed.task.error}`).toBe('completed');
      expect(healed.shown).toBe(`sent: ${t.text}`);
      expect(await modelCalls(healed.task.task_id)).toBe(1);
      const heals = (await events(healed.task.task_id)).filter((e) => e.type === 'healed');
      expect(heals).toHaveLength(1);
      expect(heals[0]).toMatchObject({
        step: t.change === 'moved' ? 4 : 2,
        after: (healTurns(t)[0] as { output: Array<{ action: unknown }> }).output[0]!.action,
        reason: expect.stringMatching(/^under the point is/),
      });

      const again = await replay(healed.task.task_id, false, computer);
      expect(again.task.status, `${t.name}: ${again.task.error}`).toBe('completed');
      expect(again.shown).toBe(`sent: ${t.text}`);
      expect(await modelCalls(again.task.task_id)).toBe(0);
      return healed.task.task_id;
    });

    // The re-exported script of a healed replay runs on the changed page; the original's stops.
    const t = BROWSER_TASKS[0]!;
    const computer = await newComputer();
    const stale = await runScript('python', await script(runs.get(t.name)!, 'python'), computer);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain('step 4 (click at 430, 220) no longer fits the screen');
    const fresh = await runScript('typescript', await script(outcomes[0]!, 'typescript'), computer);
    expect(fresh, fresh.stderr).toMatchObject({ code: 0 });
    expect(await sent(computer)).toBe(`sent: ${t.text}`);
  }, 600_000);
});
