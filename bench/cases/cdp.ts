import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser, type Page } from 'playwright-core';
import { CLICK_AT, type Bench } from '../bench.js';
import { interleave, timed } from '../sampling.js';

/**
 * The CDP door (docs/API.md §16): Playwright attached through a computer's cdp_url, against the
 * same Playwright attached to that computer's Chromium directly, on the same page. What the door
 * adds is a WebSocket hop through Benchtop and the check of each command.
 */
export async function benchCdp({ server, client, url, report }: Bench): Promise<void> {
  let computer: { id: string; cdp_url: string } | undefined;
  const created = await timed(async () => {
    computer = (await client.request('POST', '/computers', { cdp: true })) as typeof computer;
  });
  const { id, cdp_url: cdpUrl } = computer!;
  const token = new URL(cdpUrl).searchParams.get('token')!;
  const { browserUrl } = server.core.computers.cdpDoor(id, token);
  const throughDoor = await chromium.connectOverCDP(cdpUrl);
  const direct = await chromium.connectOverCDP(browserUrl);
  try {
    const page = await throughDoor.contexts()[0]!.newPage();
    await page.goto(url);
    const same = await pageAt(direct, url);
    report.timing(
      'POST /computers {cdp: true}',
      { api: [created] },
      { kind: 'reference' },
      'a Chromium of its own: no warm pool',
    );

    const [doorClick, directClick] = await interleave(20, 200, [
      () => timed(() => page.mouse.click(CLICK_AT.x, CLICK_AT.y)),
      () => timed(() => same.mouse.click(CLICK_AT.x, CLICK_AT.y)),
    ]);
    report.timing(
      'click through the CDP URL (Playwright connectOverCDP to Benchtop)',
      { api: doorClick, raw: directClick },
      { kind: 'ratio', factor: 1.2 },
      'raw = Playwright connected to that Chromium directly; same page, mouse.click',
    );

    const [doorEval, directEval] = await interleave(20, 200, [
      () => timed(() => page.evaluate(() => 1)),
      () => timed(() => same.evaluate(() => 1)),
    ]);
    report.timing(
      'evaluate through the CDP URL',
      { api: doorEval, raw: directEval },
      { kind: 'ratio', factor: 1.2, plusMs: 1 },
      'one round trip: Runtime.callFunctionOn',
    );
  } finally {
    await direct.close();
    await throughDoor.close();
    await client.request('DELETE', `/computers/${id}`);
  }
}

/** The connection's Page for the page at url (it learns of pages a moment after they open). */
async function pageAt(browser: Browser, url: string): Promise<Page> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const page = browser
      .contexts()
      .flatMap((context) => context.pages())
      .find((candidate) => candidate.url() === url);
    if (page) return page;
    if (Date.now() > deadline) throw new Error(`no page at ${url} on the direct connection`);
    await sleep(20);
  }
}
