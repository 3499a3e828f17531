import type { Policy } from '../../src/shared/approvals.js';
import { SseReader } from '../../test/helpers/sse.js';
import { CLICK_AT, rawContext, type Bench } from '../bench.js';
import { progress } from '../report.js';
import { interleave, timed } from '../sampling.js';
import { round } from '../stats.js';
import { GRID_MODEL } from './responses.js';

/** What the window's "Needs you" grid asks (src/renderer/src/attention/use-thumbnails.ts). */
const THUMBNAIL_QUERY = 'fps=3&quality=60&max_width=320';
const GRID_TASKS = 12;
const GRID_SECONDS = 5;

/**
 * Twenty policies of the kinds people write, none of which matches a click on actions.html: what
 * every action pays for being checked.
 */
const TWENTY_RULES: Policy[] = [
  ...['pay', 'buy', 'delete', 'transfer', 'submit order'].map((name, i) => ({
    id: `click-${i}`,
    when: { action_types: ['click' as const], target: { role: 'button', name_pattern: name } },
    then: 'ask' as const,
  })),
  ...['bank', 'shop', 'mail', 'admin'].map((site, i) => ({
    id: `site-${i}`,
    when: { url_pattern: `https://*.${site}.example/**` },
    then: 'ask' as const,
  })),
  { id: 'pw', when: { action_types: ['type'], target: { input_type: 'password' } }, then: 'ask' },
  { id: 'card', when: { text_pattern: '\\b\\d{4} ?\\d{4} ?\\d{4} ?\\d{4}\\b' }, then: 'deny' },
  { id: 'leave', when: { action_types: ['navigate'], new_origin: true }, then: 'ask' },
  { id: 'rm', when: { command_pattern: '\\brm\\s+-rf\\b' }, then: 'deny' },
  { id: 'sudo', when: { command_pattern: '^sudo\\b' }, then: 'ask' },
  { id: 'curl', when: { command_pattern: 'curl .*\\| *sh' }, then: 'deny' },
  { id: 'task-keys', when: { action_types: ['key'], task_only: true }, then: 'ask' },
  { id: 'other-computer', when: { computer_ids: ['comp_elsewhere'] }, then: 'deny' },
  { id: 'downloads', when: { url_pattern: '**/download/**' }, then: 'ask' },
  { id: 'drag', when: { action_types: ['drag'], url_pattern: '**/files/**' }, then: 'ask' },
  { id: 'viewport', when: { action_types: ['viewport'] }, then: 'allow' },
];

/** Twenty policies none of which needs the element under a click's point to rule it out. */
const PAGE_FREE_RULES: Policy[] = [
  ...TWENTY_RULES.filter((policy) => !policy.when.target),
  ...['orders', 'billing', 'settings', 'users', 'keys'].map((path, i) => ({
    id: `path-${i}`,
    when: { action_types: ['click' as const], url_pattern: `**/${path}/**` },
    then: 'ask' as const,
  })),
];

/**
 * Supervising by hand (docs/API.md §14): what policies cost an action they do not hold, how soon
 * an approved action runs, and the thumbnails of the "Needs you" grid under twelve tasks.
 */
export async function benchApprovals(bench: Bench): Promise<void> {
  await noMatchCost(bench);
  await roundTripFloor(bench);
  await approveToPerformed(bench);
  await gridThumbnails(bench);
}

function setPolicies({ server }: Bench, policies: Policy[]): void {
  const source = server.core.settingsSource;
  source.replace({ ...source.current(), policies });
}

async function noMatchCost(bench: Bench): Promise<void> {
  const { client, url, report } = bench;
  const { id } = await client.create();
  try {
    await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
    const click = (policies: Policy[]) => () => {
      setPolicies(bench, policies);
      return client.timed('POST', `/computers/${id}/click`, CLICK_AT, 'action');
    };
    const [checked, unchecked, pageFree] = await interleave(20, 200, [
      click(TWENTY_RULES),
      click([]),
      click(PAGE_FREE_RULES),
    ]);
    report.timing(
      'click, 20 policies none matching vs none',
      { api: checked, raw: unchecked },
      { kind: 'ratio', factor: 1, plusMs: 0.3 },
      'api = 20 policies (5 of them about clicked buttons: the element under the point is read over CDP), raw = no policies',
    );
    report.timing(
      'click, 20 policies none needing the element',
      { api: pageFree, raw: unchecked },
      { kind: 'ratio', factor: 1, plusMs: 0.3 },
      'api = 20 policies whose click conditions are decided without reading the element, raw = no policies',
    );
  } finally {
    setPolicies(bench, []);
    await client.request('DELETE', `/computers/${id}`);
  }
}

/**
 * What any read of the page costs a click, whoever reads it: raw Playwright, one CDP round trip
 * (the cheapest there is) right before the click, against the click alone. The element read of
 * the row above takes two such round trips.
 */
async function roundTripFloor({ browser, url, report }: Bench): Promise<void> {
  const { context, page } = await rawContext(browser);
  try {
    await page.goto(url);
    const cdp = await context.newCDPSession(page);
    const click = () => page.mouse.click(CLICK_AT.x, CLICK_AT.y);
    const [read, alone] = await interleave(20, 200, [
      () =>
        timed(async () => {
          await cdp.send('Runtime.evaluate', { expression: '1' });
          await click();
        }),
      () => timed(click),
    ]);
    report.timing(
      'raw click after one CDP round trip vs alone',
      { api: read, raw: alone },
      { kind: 'reference' },
      "api = Runtime.evaluate('1') then page.mouse.click, raw = page.mouse.click: the floor of reading the page before an action",
    );
  } finally {
    await context.close();
  }
}

async function approveToPerformed(bench: Bench): Promise<void> {
  const { server, client, url, report } = bench;
  const { id } = await client.create();
  const events = await SseReader.open(`${server.url}/computers/${id}/events`, server.key);
  try {
    await client.request('POST', `/computers/${id}/navigate`, { url }, 'action');
    setPolicies(bench, [{ id: 'ask', when: { action_types: ['click'] }, then: 'ask' }]);
    const samples: number[] = [];
    for (let i = 0; i < 60; i++) {
      const click = client.request('POST', `/computers/${id}/click`, CLICK_AT, 'action');
      const approvalId = await askedFor(events);
      const start = performance.now();
      // Answers once the action ran (or was voided: the check below says it ran).
      const approval = (await client.request('POST', `/approvals/${approvalId}/approve`, {})) as {
        status: string;
      };
      const ms = performance.now() - start;
      const result = (await click) as { status: string };
      if (approval.status !== 'approved' || result.status !== 'success') {
        throw new Error(`approval ${approvalId} ended ${approval.status}, click ${result.status}`);
      }
      if (i >= 10) samples.push(ms);
    }
    report.timing('approve → action performed', { api: samples }, { kind: 'absolute', maxMs: 50 });
  } finally {
    setPolicies(bench, []);
    events.close();
    await client.request('DELETE', `/computers/${id}`);
  }
}

async function askedFor(events: SseReader): Promise<string> {
  for (;;) {
    const event = await events.next(10_000);
    if (!event) throw new Error('the events stream ended before approval_required');
    const data = event.data as { type: string; approval_id?: string };
    if (data.type === 'approval_required') return data.approval_id!;
  }
}

/** Frames per second between the first and last of a thumbnail's frames. */
function rate(times: number[]): number {
  if (times.length < 2) return 0;
  return (times.length - 1) / ((times.at(-1)! - times[0]!) / 1000);
}

async function gridThumbnails(bench: Bench): Promise<void> {
  const { server, client, fixtures, report } = bench;
  const ids: string[] = [];
  const readers: SseReader[] = [];
  try {
    for (let i = 0; i < GRID_TASKS; i++) {
      const { id } = await client.create();
      ids.push(id);
      const animated = `${fixtures.url}/animated.html`;
      await client.request('POST', `/computers/${id}/navigate`, { url: animated }, 'action');
    }
    for (const id of ids) {
      await client.request('POST', '/agent/tasks', {
        instruction: 'Click around',
        computer_id: id,
        model: GRID_MODEL,
        max_steps: 500,
        stall_detection: false,
      });
    }
    // One stream for the whole grid, as the window opens it.
    const reader = await SseReader.open(
      `${server.url}/screencasts?ids=${ids.join(',')}&${THUMBNAIL_QUERY}`,
      server.key,
    );
    readers.push(reader);
    await reader.next();
    const times = new Map<string, number[]>(ids.map((id) => [id, []]));
    for (const event of await reader.collect(GRID_SECONDS * 1000)) {
      const frame = event.data as { computer_id?: string; metadata?: { timestamp: string } };
      if (frame.computer_id && frame.metadata) {
        times.get(frame.computer_id)?.push(Date.parse(frame.metadata.timestamp));
      }
    }
    const rates = [...times.values()].map(rate);
    const slowest = Math.min(...rates);
    report.add({
      name: `grid of ${GRID_TASKS} thumbnails, tasks running`,
      api_p50_ms: null,
      raw_p50_ms: null,
      api_value: round(slowest),
      raw_value: round(rates.reduce((sum, value) => sum + value, 0) / rates.length),
      ratio: null,
      target: `slowest thumbnail ≥ 2 frames/s (values: slowest, mean; ${GRID_TASKS} tasks clicking on animated pages, thumbnails ${THUMBNAIL_QUERY})`,
      pass: slowest >= 2,
      samples: rates.length,
    });
    progress(`grid: slowest thumbnail ${round(slowest)} fps`);
  } finally {
    for (const reader of readers) reader.close();
    for (const id of ids) await client.request('DELETE', `/computers/${id}`);
  }
}
