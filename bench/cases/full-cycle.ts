import { setTimeout as sleep } from 'node:timers/promises';
import { rawContext, UNPOOLED, VIEWPORT, type Bench } from '../bench.js';
import { interleave, timed } from '../sampling.js';

/**
 * Each cycle starts with the pool full and its last refill settled (a new page's renderer works
 * for a while after it is made), so that neither side pays for what the other left running.
 */
async function quiet(server: Bench['server']): Promise<void> {
  await server.core.browsers.whenWarm();
  await sleep(300);
}

export async function benchFullCycle({
  server,
  client,
  browser,
  url,
  report,
}: Bench): Promise<void> {
  const apiCycle = (display?: { width: number; height: number }) => async () => {
    await quiet(server);
    return client.cycle(url, display);
  };
  const rawCycle =
    (viewport = VIEWPORT) =>
    async () => {
      await quiet(server);
      return timed(async () => {
        const { context, page } = await rawContext(browser, viewport);
        await page.goto(url);
        await page.screenshot({ type: 'png' });
        await context.close();
      });
    };
  const [api, raw] = await interleave(2, 20, [apiCycle(), rawCycle()]);
  report.timing(
    'full cycle: create→navigate→screenshot→delete',
    { api, raw },
    { kind: 'ratio', factor: 1.2 },
    'API create takes a pooled context (its refill comes 500 ms later); each cycle starts with the pool full and settled',
  );
  const [apiCold, rawCold] = await interleave(1, 12, [apiCycle(UNPOOLED), rawCycle(UNPOOLED)]);
  report.timing(
    'full cycle, pool bypassed (1280×719)',
    { api: apiCold, raw: rawCold },
    { kind: 'reference' },
    'a display the pool does not prepare: the API pays newContext+newPage as raw does',
  );
}
