import { rawContext, UNPOOLED, VIEWPORT, type Bench } from '../bench.js';
import { interleave, timed } from '../sampling.js';

export async function benchFullCycle({
  server,
  client,
  browser,
  url,
  report,
}: Bench): Promise<void> {
  const apiCycle = (display?: { width: number; height: number }) => async () => {
    await server.core.browsers.whenWarm();
    return client.cycle(url, display);
  };
  const rawCycle =
    (viewport = VIEWPORT) =>
    async () => {
      await server.core.browsers.whenWarm();
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
    'API create takes a pooled context; its refill runs during the cycle and is awaited before the next',
  );
  const [apiCold, rawCold] = await interleave(1, 12, [apiCycle(UNPOOLED), rawCycle(UNPOOLED)]);
  report.timing(
    'full cycle, pool bypassed (1280×719)',
    { api: apiCold, raw: rawCold },
    { kind: 'reference' },
    'a display the pool does not prepare: the API pays newContext+newPage as raw does',
  );
}
