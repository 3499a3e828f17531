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

  it('the Usage screen sums cost per day and per task', async () => {
    const page = await open('#/usage');
    await page.getByRole('heading', { name: 'Per day' }).waitFor();
    const tables = page.locator('table.usage-table');
    const day = tables.nth(0).locator('tbody tr').first();
    // Two priced task calls and one unpriced call today.
    await expect.poll(() => day.textContent()).toContain('$0.0054 + 1 unpriced');
    expect(await day.locator('td').first().textContent()).toBe('3');
    const taskRow = tables.nth(1).locator('tbody tr', { hasText: task.task_id });
    expect(await taskRow.textContent()).toContain('$0.0054');
    await taskRow.getByRole('link', { name: task.task_id }).waitFor();
    expect(await page.getByText('1 call came through the Responses API').count()).toBe(1);
    await saveScreenshots(page, 'usage');
  });
});
