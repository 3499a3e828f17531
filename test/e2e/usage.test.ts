import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Task } from '../../src/shared/tasks.js';
import { chatCompletion, startFakeChatCompletions } from '../helpers/fake-chat-completions.js';
import type { FakeUpstream } from '../helpers/fake-upstream.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, saveScreenshots, UiPages } from '../helpers/ui-browser.js';

/**
 * What model calls cost, in the window (out/renderer must be built): a task's page shows its cost
 * and tokens from the ledger, and the Usage screen sums the ledger per day and per task.
 */

let fake: FakeUpstream;
let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));
let task: Task;

// The fake's usage per call (1200 in, 30 out) at $2 and $10 per million: $0.0027 a call.
const PRICE = { input_per_mtok: 2, output_per_mtok: 10 };

beforeAll(async () => {
  fake = await startFakeChatCompletions();
  const vlm = { provider: 'openai-compatible' as const, base_url: fake.url, model: 'fake-vlm' };
  server = await startTestServer({
    models: {
      default: 'vlm',
      providers: { vlm: { ...vlm, price: PRICE }, unpriced: vlm },
    },
    recording: { enabled: false },
  });
  browser = await launchUiBrowser();
  const click = {
    tool_calls: [
      {
        id: 'c1',
        type: 'function',
        function: { name: 'computer', arguments: '{"action":"click","x":100,"y":100}' },
      },
    ],
  };
  // The first call is rate-limited once: tried again after the wait, and still one call.
  const limited = { message: 'Rate limit reached for requests', code: 'rate_limit_exceeded' };
  fake.reply(
    { status: 429, headers: { 'retry-after-ms': '50' }, json: { error: limited } },
    { json: chatCompletion(click) },
    { json: chatCompletion({ content: 'Clicked.' }) },
  );
  const computer = await server.request('POST', '/computers', {
    display: { width: 400, height: 300 },
  });
  const started = await server.request('POST', '/agent/tasks', {
    instruction: 'Click once',
    computer_id: computer.body.id,
    stall_detection: false,
  });
  task = await eventually(async () => {
    const current = (await server.request('GET', `/agent/tasks/${started.body.task_id}`))
      .body as Task;
    return current.exit_code !== null && current;
  }, 20_000);
  await server.request('DELETE', `/computers/${computer.body.id}`);
  // A Responses call outside any task, on a model without a price.
  fake.reply({ json: chatCompletion({ content: 'Hi.' }) });
  await server.request('POST', '/v1/responses', { model: 'unpriced', input: 'Hello' });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fake?.close();
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

const open = (route: string): Promise<Page> => pages.open(route);

describe('usage in the window', () => {
  it("a task's page shows its cost and tokens", async () => {
    expect(task).toMatchObject({ status: 'completed', usage: { input_tokens: 2400 } });
    const page = await open(`#/tasks/${task.task_id}`);
    const cost = page.locator('.task-cost');
    // The cost comes with the task; the count of calls once the ledger's rows have loaded.
    await expect.poll(() => cost.textContent()).toContain('(2 model calls)');
    expect(await cost.textContent()).toContain('Cost $0.0054');
    expect(await page.locator('.usage').textContent()).toContain('Tokens 2,460');
    await saveScreenshots(page, 'task-usage');
  });

  it("a task's timeline says where it waited out the model's rate limit", async () => {
    const page = await open(`#/tasks/${task.task_id}`);
    const waited = page.locator('.event-model_retry');
    await waited.waitFor();
    expect(await waited.textContent()).toMatch(
      /^waits .*answered HTTP 429: Rate limit reached for requests; trying again in 50 ms \(try 2 of 3\)$/,
    );
    await saveScreenshots(page, 'task-rate-limited');
  });

  it('the Usage screen sums cost per day, per model and per task', async () => {
    const page = await open('#/usage');
    await page.getByRole('heading', { name: 'Per day' }).waitFor();
    const table = (name: string) => page.getByRole('table', { name });
    const day = table('Per day').locator('tbody tr').first();
    // Two priced task calls and one unpriced call today.
    await expect.poll(() => day.textContent()).toContain('$0.0054 + 1 unpriced');
    expect(await day.locator('td').first().textContent()).toBe('3');
    // Per model: the priced one with its two calls first, then the one without a price.
    const models = table('Per model').locator('tbody tr');
    expect(await models.locator('th').allTextContents()).toEqual(['vlm', 'unpriced']);
    expect(await models.nth(0).locator('td').allTextContents()).toEqual([
      '2',
      '2,400',
      '0',
      '60',
      '$0.0054',
    ]);
    expect(await models.nth(1).locator('td').last().textContent()).toBe('no price set');
    const taskRow = table('Per task').locator('tbody tr', { hasText: task.task_id });
    expect(await taskRow.textContent()).toContain('$0.0054');
    await taskRow.getByRole('link', { name: task.task_id }).waitFor();
    expect(await page.getByText('1 call came through the Responses API').count()).toBe(1);
    await saveScreenshots(page, 'usage');
  });

  it('a task out of budget is raised and resumed from its live view, then from its page', async () => {
    fake.reset();
    const click = {
      tool_calls: [
        {
          id: 'c1',
          type: 'function',
          function: { name: 'computer', arguments: '{"action":"click","x":100,"y":100}' },
        },
      ],
    };
    // 1,230 tokens a call: the first reaches 1,000, the second the 2,000 it is raised to.
    fake.reply(
      { json: chatCompletion(click) },
      { json: chatCompletion(click) },
      { json: chatCompletion({ content: 'Clicked twice.' }) },
    );
    const computer = await server.request('POST', '/computers', {
      display: { width: 400, height: 300 },
    });
    const computerId = computer.body.id as string;
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Click twice',
      computer_id: computerId,
      stall_detection: false,
      max_tokens: 1000,
    });
    expect(started.status, started.text).toBe(200);
    const taskId = started.body.task_id as string;
    const pausedAt = (limit: number) =>
      eventually(async () => {
        const current = (await server.request('GET', `/agent/tasks/${taskId}`)).body as Task;
        return current.paused_reason === 'budget' && current.budgets.max_tokens === limit;
      }, 20_000);

    // The queue offers the same.
    const queue = await open('#/attention');
    const item = queue.locator('article.attention-budget');
    await item.getByRole('spinbutton', { name: 'Tokens (was 1,000)' }).waitFor();
    await item.getByRole('link', { name: 'Open the task' }).waitFor();

    const live = await open(`#/computers/${computerId}`);
    const banner = live.locator('.driver-paused');
    await banner
      .getByText(`Agent task ${taskId} is paused: budget max_tokens reached: 1230 of 1000.`)
      .waitFor();
    expect(await banner.getByRole('button', { name: 'Resume it' }).count()).toBe(0);
    // Twice the old limit is offered.
    const raised = banner.getByRole('spinbutton', { name: 'Tokens (was 1,000)' });
    expect(await raised.inputValue()).toBe('2000');
    await saveScreenshots(live, 'live-view-budget');
    await banner.getByRole('button', { name: 'Raise and resume' }).click();
    await pausedAt(2000);

    const page = await open(`#/tasks/${taskId}`);
    await page.getByText('Paused: budget max_tokens reached: 2460 of 2000.').waitFor();
    expect(await page.getByRole('button', { name: 'Resume', exact: true }).count()).toBe(0);
    await page.getByRole('spinbutton', { name: 'Tokens (was 2,000)' }).fill('10000');
    await page.getByRole('button', { name: 'Raise and resume' }).click();
    const done = await eventually(async () => {
      const current = (await server.request('GET', `/agent/tasks/${taskId}`)).body as Task;
      return current.status === 'completed' && current;
    }, 20_000);
    expect(done).toMatchObject({ budgets: { max_tokens: 10000 }, result: 'Clicked twice.' });
    expect(fake.requests).toHaveLength(3);
    // Ended under the open page, a poll of its recording in flight answers 404.
    expect(await pages.close(), 'the page logged errors').toEqual([]);
    await server.request('DELETE', `/computers/${computerId}`);
  });
});
