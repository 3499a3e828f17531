import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Approval, Policy } from '../../src/shared/approvals.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { SDK_HEADERS } from '../helpers/lightcone-clients.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';
import { launchUiBrowser, saveScreenshots, UiPages } from '../helpers/ui-browser.js';

/**
 * Supervising by hand at /ui/ in real Chromium against the real server (out/renderer built): a
 * policy holds a click, the Needs-you screen shows it, and the person's decision is what the
 * waiting caller (or agent task) gets.
 */

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-approvals-ui-'));
function script(name: string, turns: unknown[], delay_ms = 200): string {
  const path = join(scripts, `${name}.json`);
  writeFileSync(path, JSON.stringify({ delay_ms, turns }));
  return path;
}
const PAYER_TURNS = [
  { output: [{ type: 'computer_call', action: { type: 'click', x: 100, y: 60 } }] },
  { output: [{ type: 'message', text: 'I was not allowed to pay.' }] },
];
const MODELS = {
  default: 'payer',
  providers: {
    // Tries to pay, then reports what happened.
    payer: { provider: 'scripted' as const, script: script('payer', PAYER_TURNS) },
    // The same, thinking 2.5 s a turn: it is seen driving again after its click is approved.
    'slow-payer': {
      provider: 'scripted' as const,
      script: script('slow-payer', PAYER_TURNS, 2500),
    },
    // Asks for a person, then reports.
    asker: {
      provider: 'scripted' as const,
      script: script('asker', [
        {
          output: [
            {
              type: 'function_call',
              name: 'request_human',
              arguments: { reason: 'Type the one-time code sent to the phone.' },
            },
          ],
        },
        { output: [{ type: 'message', text: 'Signed in.' }] },
      ]),
    },
    // Nothing listens there: a task on it fails at its first step.
    dead: { provider: 'openai-compatible' as const, base_url: 'http://127.0.0.1:9/v1' },
  },
};

/** Clicks on checkout.html's "Pay now" button need a person. */
const PAY_POLICY: Policy = {
  id: 'payments',
  description: 'Paying needs a person',
  when: { action_types: ['click'], target: { role: 'button', name_pattern: '^Pay' } },
  then: 'ask',
};
const PAY_BUTTON = { x: 100, y: 60 };

let fixtures: FixtureServer;
let server: TestServer;
let browser: Browser;
const pages = new UiPages(() => ({ browser, server }));
let computerId: string;

beforeAll(async () => {
  fixtures = await startFixtureServer();
  server = await startTestServer({ models: MODELS });
  browser = await launchUiBrowser();
  const policies = await server.request('PUT', '/policies', [PAY_POLICY]);
  expect(policies.status, policies.text).toBe(200);
  computerId = (await server.request('POST', '/computers', {})).body.id as string;
  await showCheckout('');
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await fixtures?.close();
  rmSync(scripts, { recursive: true, force: true });
});
afterEach(async () => {
  expect(await pages.close(), 'the page logged errors').toEqual([]);
});

const open = (route: string): Promise<Page> => pages.open(route);

async function showCheckout(query: string): Promise<void> {
  const navigated = await server.request('POST', `/computers/${computerId}/navigate`, {
    url: `${fixtures.url}/checkout.html${query}`,
  });
  expect(navigated.body.status, navigated.text).toBe('success');
}

/** How many times the page says it was paid, read through the computer's own /html action. */
async function timesPaid(): Promise<number> {
  const html = await server.request('POST', `/computers/${computerId}/html`, {});
  const match = /<p id="status">([^<]*)<\/p>/.exec(html.body.result.html_content as string);
  if (!match) throw new Error('the page is not checkout.html');
  return match[1]!.split(', ').filter((said) => said === 'paid').length;
}

/** A click on "Pay now" as the Python SDK sends it: the request waits for the person's decision. */
function clickPay() {
  return server.request('POST', `/computers/${computerId}/click`, PAY_BUTTON, {
    headers: SDK_HEADERS.currentPython,
  });
}

const approvalCards = (page: Page) => page.locator('article.attention-approval');

/** Waits for the queue's held click (on the page given) and for its screenshot to have loaded. */
async function heldClick(page: Page, pageUrl = `${fixtures.url}/checkout.html`): Promise<Locator> {
  const card = page.getByRole('article', { name: /^Approve .*click/ }).filter({ hasText: pageUrl });
  await card.waitFor();
  const shot = card.getByRole('img', { name: /The screen when/ });
  await shot.waitFor();
  await expect
    .poll(() => shot.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
    .toBeGreaterThan(0);
  return card;
}

const decisions = (page: Page) => page.getByRole('list', { name: 'Your last decisions' });

describe('the Needs-you screen', () => {
  it('shows a held click with its screen, page and target; Approve runs it', async () => {
    const page = await open('#/attention');
    // The running computer is among the live thumbnails before anything is asked.
    const thumbnail = page.locator(`.thumbnail[data-computer-id="${computerId}"]`);
    await expect
      .poll(() =>
        thumbnail
          .locator('canvas')
          .evaluate((canvas: HTMLCanvasElement) => Number(canvas.dataset.framesDrawn ?? 0)),
      )
      .toBeGreaterThan(0);

    const clicked = clickPay();
    const card = await heldClick(page);
    await expect.poll(() => card.textContent()).toContain('Paying needs a person');
    expect(await card.textContent()).toContain('button “Pay now”');
    // Who asks, for a person who runs several agents.
    const from = card.locator('dt:text-is("From") + dd');
    expect(await from.innerText()).toBe(`Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…)`);
    await page.getByRole('link', { name: /Needs you\s*1 waiting/ }).waitFor();
    await saveScreenshots(page, 'needs-you-approval');
    expect(await timesPaid()).toBe(0);
    // Waiting for the person, the computer cannot idle out, and Sessions says so.
    await page.evaluate(() => (location.hash = '#/sessions'));
    const idleCell = page.locator(`tr[data-computer-id="${computerId}"] > td:nth-child(6)`);
    await expect.poll(() => idleCell.innerText()).toBe('after a person decides');
    await page.evaluate(() => (location.hash = '#/attention'));

    await card.getByRole('button', { name: 'Approve' }).click();
    const answer = await clicked;
    expect(answer.body.status, answer.text).toBe('success');
    expect(await timesPaid()).toBe(1);
    await decisions(page)
      .getByText(/^Approved: .*click/)
      .waitFor();
    await page.getByText('Nothing waits for you.').waitFor();
    expect(await approvalCards(page).count()).toBe(0);
  });

  it('a denial with a note is what the waiting caller is told, and nothing is clicked', async () => {
    const page = await open('#/attention');
    const clicked = clickPay();
    const card = await heldClick(page);
    await card.getByRole('textbox', { name: /Note/ }).fill('not with this card');
    await card.getByRole('button', { name: 'Deny' }).click();
    const answer = await clicked;
    expect(answer.body).toMatchObject({
      status: 'error',
      error_message: 'denied: not with this card',
    });
    await decisions(page)
      .getByText(/^Denied: .*“not with this card”/)
      .waitFor();
    expect(await timesPaid()).toBe(1);
  });

  it('an approval given after the page changed expires, and the click is asked again', async () => {
    const page = await open('#/attention');
    const clicked = clickPay();
    const first = await heldClick(page);
    // Meanwhile the tab goes to another page (a navigation no policy holds).
    await showCheckout('?step=2');

    await first.getByRole('button', { name: 'Approve' }).click();
    await decisions(page)
      .getByText(/^Not run: click .*: the page changed: .* Asked again\.$/)
      .waitFor();
    // The same click, asked again about the new page.
    const again = await heldClick(page, `${fixtures.url}/checkout.html?step=2`);
    await saveScreenshots(page, 'needs-you-expired');

    await again.getByRole('button', { name: 'Approve' }).click();
    const answer = await clicked;
    expect(answer.body.status, answer.text).toBe('success');
    // The new page was clicked once; the old one never was after it changed.
    expect(await timesPaid()).toBe(1);
  });

  it('an agent task told no goes on, and its timeline shows what was asked and the denial', async () => {
    const page = await open('#/attention');
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Pay for the order',
      computer_id: computerId,
    });
    expect(started.status, started.text).toBe(200);
    const taskId = started.body.task_id as string;

    const card = await heldClick(page);
    await card.getByRole('link', { name: taskId }).waitFor();
    // What the agent is after is on the card the person decides on.
    await card.getByText('Instruction: Pay for the order').waitFor();
    await saveScreenshots(page, 'attention-task-approval');
    await card.getByRole('textbox', { name: /Note/ }).fill('no purchases today');
    await card.getByRole('button', { name: 'Deny' }).click();
    await decisions(page)
      .getByText(/^Denied: /)
      .waitFor();
    await eventually(
      async () =>
        (await server.request('GET', `/agent/tasks/${taskId}`)).body.status === 'completed',
      15_000,
    );

    await page.evaluate((hash) => (location.hash = hash), `#/tasks/${taskId}`);
    const steps = page.getByRole('list', { name: 'Steps' });
    await steps.getByText(/click at 100, 60 on button “Pay now”: Paying needs a person/).waitFor();
    await steps.locator('.event-denied').getByText('“no purchases today”').waitFor();
    const asked = steps.getByRole('img', { name: 'The screen when approval was asked' });
    await expect
      .poll(() => asked.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
      .toBeGreaterThan(0);
    await steps.locator('.event-completed').getByText('I was not allowed to pay.').waitFor();
    await saveScreenshots(page, 'task-denied-timeline');
    expect(await timesPaid()).toBe(1);
  });

  it("a task's held action is decided on the task's own page, where Resume is not offered", async () => {
    const paidBefore = await timesPaid();
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Pay for the order',
      computer_id: computerId,
    });
    expect(started.status, started.text).toBe(200);
    const taskId = started.body.task_id as string;
    const page = await open(`#/tasks/${taskId}`);

    const card = await heldClick(page);
    await page.getByText('Paused: waiting for a person to approve an action.').waitFor();
    expect(await page.getByRole('button', { name: 'Resume', exact: true }).count()).toBe(0);
    await saveScreenshots(page, 'task-held-action');
    await card.getByRole('button', { name: 'Approve' }).click();
    await page
      .getByRole('status')
      .getByText(`Approved: click at 100, 60 on ${computerId} ran.`)
      .waitFor();
    await card.waitFor({ state: 'detached' });
    await eventually(
      async () =>
        (await server.request('GET', `/agent/tasks/${taskId}`)).body.status === 'completed',
      15_000,
    );
    expect(await timesPaid()).toBe(paidBefore + 1);
  });

  it("the computer's live view asks about its task's held action, and Approve there runs it", async () => {
    const paidBefore = await timesPaid();
    const page = await open(`#/computers/${computerId}`);
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Pay for the order',
      computer_id: computerId,
      model: 'slow-payer',
    });
    expect(started.status, started.text).toBe(200);
    const taskId = started.body.task_id as string;

    const banner = page.locator('.driver-paused');
    await banner.getByText(`Agent task ${taskId} waits for your approval.`).waitFor();
    await banner.getByText('click at 100, 60 on button “Pay now”: Paying needs a person').waitFor();
    expect(await banner.getByRole('button', { name: 'Resume it' }).count()).toBe(0);
    await saveScreenshots(page, 'live-view-held-action');
    // The person looks around first (a click on an empty part of the page): driving, they are
    // still asked, and not offered a hand back that would be refused.
    const stage = (await page.locator('.stage canvas').boundingBox())!;
    await page.mouse.click(stage.x + stage.width * 0.8, stage.y + stage.height * 0.8);
    const driving = page.locator('.driver-person');
    await driving.getByText('You are driving.').waitFor();
    await driving.getByText(`Agent task ${taskId} waits for your approval.`).waitFor();
    expect(await driving.getByRole('button', { name: /^Hand back/ }).count()).toBe(0);
    await driving.getByRole('button', { name: 'Approve' }).click();
    // The approved task drives again: the person no longer does (nor is offered a hand back).
    await page.locator('.driver-agent').getByText(`Agent task ${taskId} is driving.`).waitFor();
    await saveScreenshots(page, 'live-view-approved');
    await eventually(
      async () =>
        (await server.request('GET', `/agent/tasks/${taskId}`)).body.status === 'completed',
      15_000,
    );
    expect(await timesPaid()).toBe(paidBefore + 1);
    expect(await server.request('GET', '/approvals?status=pending').then((r) => r.body)).toEqual(
      [],
    );
  });

  it("the computer's live view asks about an API client's held click, naming who sent it", async () => {
    const paidBefore = await timesPaid();
    const page = await open(`#/computers/${computerId}`);
    await page.locator('.driver-nobody').waitFor();
    const clicked = clickPay();
    const banner = page.locator('.driver-held');
    await banner
      .getByText(`Python SDK 2.39.0 (key ${server.key.slice(0, 7)}…) waits for your approval.`)
      .waitFor();
    await banner.getByText('click at 100, 60 on button “Pay now”: Paying needs a person').waitFor();
    // While the person decides, the computer cannot idle out, and its facts say so.
    const facts = page.locator('.screen-head .facts');
    await facts.getByText('no idle timeout while a person decides').waitFor();
    await saveScreenshots(page, 'live-view-client-held-action');
    expect(await timesPaid()).toBe(paidBefore);

    await banner.getByRole('button', { name: 'Approve' }).click();
    const answer = await clicked;
    expect(answer.body.status, answer.text).toBe('success');
    expect(await timesPaid()).toBe(paidBefore + 1);
    await banner.waitFor({ state: 'detached' });
    await facts.getByText(/^idle ends in/).waitFor();
    // Nobody drove it meanwhile: the person decided, and the client's click ran.
    await page.locator('.driver-nobody').waitFor();
  });

  it('a task that asks for a person says why above the live view and on its page', async () => {
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Sign in',
      computer_id: computerId,
      model: 'asker',
    });
    expect(started.status, started.text).toBe(200);
    const taskId = started.body.task_id as string;
    const asked = 'the agent asks for a person: Type the one-time code sent to the phone';

    const taskPage = await open(`#/tasks/${taskId}`);
    await taskPage.getByText(`Paused: ${asked}.`).waitFor();
    const page = await open(`#/computers/${computerId}`);
    const banner = page.locator('.driver-paused');
    await banner.getByText(`Agent task ${taskId} is paused: ${asked}.`).waitFor();
    await saveScreenshots(page, 'live-view-handoff');
    await banner.getByRole('button', { name: 'Resume it' }).click();
    await eventually(
      async () =>
        (await server.request('GET', `/agent/tasks/${taskId}`)).body.status === 'completed',
      15_000,
    );
  });

  it('a computer that ended with its task names the task and how it ended', async () => {
    // No computer given: the task makes its own, which ends with it.
    const started = await server.request('POST', '/agent/tasks', { instruction: 'Look around' });
    expect(started.status, started.text).toBe(200);
    const { task_id: taskId, computer_id: ownComputer } = started.body as Record<string, string>;
    await eventually(
      async () =>
        (await server.request('GET', `/computers/${ownComputer}`)).body.status === 'terminated',
      15_000,
    );
    const page = await open(`#/computers/${ownComputer}`);
    const ended = page.locator('.ended-task');
    await ended.waitFor();
    expect(await ended.innerText()).toBe(
      `Its last task ${taskId} completed: I was not allowed to pay.`,
    );
    await ended.getByRole('link', { name: taskId }).click();
    await page.getByRole('heading', { name: taskId }).waitFor();
  });

  it('a failed task stays until the person dismisses it', async () => {
    const started = await server.request('POST', '/agent/tasks', {
      instruction: 'Check the order',
      model: 'dead',
    });
    const taskId = started.body.task_id as string;
    await eventually(
      async () => (await server.request('GET', `/agent/tasks/${taskId}`)).body.status === 'failed',
    );
    const page = await open('#/attention');
    const card = page.locator('article.attention-failed').filter({ hasText: taskId });
    await card.getByText(/could not reach/).waitFor();
    await saveScreenshots(page, 'attention-failed');
    await card.getByRole('button', { name: `Dismiss ${taskId}` }).click();
    await card.waitFor({ state: 'detached' });
    const queue = (await server.request('GET', '/attention')).body as Array<{ task_id: string }>;
    expect(queue.filter((item) => item.task_id === taskId)).toEqual([]);
  });

  it('opens a computer’s live view from its thumbnail', async () => {
    const page = await open('#/attention');
    await page.locator(`.thumbnail[data-computer-id="${computerId}"]`).click();
    await page.waitForURL(new RegExp(`#/computers/${computerId}$`));
    await page
      .getByRole('application', { name: new RegExp(`Live view of ${computerId}`) })
      .waitFor();
  });
});

describe("a person's own actions", () => {
  it('are not held by a policy on the page: the tab strip lists, opens and closes tabs', async () => {
    // Everything on the fixture pages needs a person, except what the person does.
    const onFixtures: Policy = {
      id: 'fixtures',
      when: { url_pattern: `${fixtures.url}/**` },
      then: 'ask',
    };
    expect((await server.request('PUT', '/policies', [onFixtures])).status).toBe(200);
    try {
      const page = await open(`#/computers/${computerId}`);
      const tabs = page.getByRole('group', { name: 'Tabs' });
      await tabs.getByRole('button', { name: /^Switch to tab Checkout fixture/ }).waitFor();
      await tabs.getByRole('button', { name: 'Open a new tab' }).click();
      await expect.poll(() => tabs.getByRole('button', { name: /^Close tab/ }).count()).toBe(2);
      await tabs
        .getByRole('button', { name: /^Close tab/ })
        .last()
        .click();
      await expect.poll(() => tabs.getByRole('button', { name: /^Close tab/ }).count()).toBe(1);
      const asked = await server.request<Approval[]>(
        'GET',
        `/approvals?status=pending&computer_id=${computerId}`,
      );
      expect(asked.body.map((approval) => approval.action)).toEqual([]);
    } finally {
      await server.request('PUT', '/policies', [PAY_POLICY]);
    }
  });
});

describe('the policies editor', () => {
  it('adds a policy, shows a refused field beside it, and saves the list', async () => {
    const page = await open('#/settings');
    const section = page.getByRole('form', { name: 'Approval policies' });
    await section.getByRole('group', { name: /^Policy 1: payments/ }).waitFor();
    await section.getByRole('button', { name: 'Add a policy' }).click();
    const added = section.getByRole('group', { name: /^Policy 2:/ });
    await added.getByRole('textbox', { name: 'Id', exact: true }).fill('shell');
    await added.getByRole('checkbox', { name: 'click', exact: true }).uncheck();
    await added.getByRole('checkbox', { name: 'exec', exact: true }).check();
    await added.getByRole('textbox', { name: 'Shell command (regex)' }).fill('rm (-rf');
    await added.getByRole('combobox', { name: 'Then' }).selectOption('deny');
    await section.getByRole('button', { name: 'Save policies' }).click();
    // The server's 400 names when.command_pattern of the second policy: shown under that field.
    const field = added.locator('.policy-field', {
      has: page.getByRole('textbox', { name: 'Shell command (regex)' }),
    });
    await field
      .getByRole('alert')
      .getByText(/command_pattern/)
      .waitFor();
    await saveScreenshots(page, 'policies-refused-field');

    await added.getByRole('textbox', { name: 'Shell command (regex)' }).fill('^rm -rf');
    await section.getByRole('button', { name: 'Save policies' }).click();
    await section.getByRole('status').getByText('Saved.').waitFor();
    const stored = await server.request<Policy[]>('GET', '/policies');
    expect(stored.body).toEqual([
      PAY_POLICY,
      { id: 'shell', when: { action_types: ['exec'], command_pattern: '^rm -rf' }, then: 'deny' },
    ]);

    await section.getByRole('button', { name: 'Move shell up' }).click();
    await section.getByRole('button', { name: 'Delete payments' }).click();
    await section.getByRole('button', { name: 'Save policies' }).click();
    await section.getByRole('status').getByText('Saved.').waitFor();
    expect((await server.request<Policy[]>('GET', '/policies')).body.map((p) => p.id)).toEqual([
      'shell',
    ]);
    // Chromium logs the refused save's 400 itself (once or more); the page logged nothing else.
    expect(new Set(pages.errors)).toEqual(
      new Set([
        'console: Failed to load resource: the server responded with a status of 400 (Bad Request)',
      ]),
    );
    pages.errors.length = 0;
  });
});
