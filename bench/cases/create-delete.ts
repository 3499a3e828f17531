import type { BrowserContext } from 'playwright-core';
import { rawContext, type Bench } from '../bench.js';
import { timed } from '../sampling.js';

export async function benchCreateDelete({ server, client, browser, report }: Bench): Promise<void> {
  const warm = () => server.core.browsers.whenWarm();
  const api = { create: [] as number[], remove: [] as number[] };
  const raw = { create: [] as number[], remove: [] as number[] };
  const apiRound = async () => {
    await warm();
    const { id, ms } = await client.create();
    api.create.push(ms);
    // A create starts a pool refill (newContext + newPage) in the background; DELETE is measured
    // after it, on a machine as quiet as the raw close gets.
    await warm();
    api.remove.push(await client.timed('DELETE', `/computers/${id}`));
  };
  const rawRound = async () => {
    await warm();
    let context: BrowserContext | undefined;
    raw.create.push(await timed(async () => ({ context } = await rawContext(browser))));
    raw.remove.push(await timed(() => context!.close()));
  };
  const warmup = 3;
  for (let round = 0; round < warmup + 30; round++) {
    if (round === warmup)
      for (const list of [api.create, api.remove, raw.create, raw.remove]) list.length = 0;
    if (round % 2 === 0) {
      await apiRound();
      await rawRound();
    } else {
      await rawRound();
      await apiRound();
    }
  }
  report.timing(
    'POST /computers (warm path)',
    { api: api.create, raw: raw.create },
    { kind: 'absolute', maxMs: 50 },
    'core.browsers.whenWarm() awaited before every create; raw = newContext+newPage',
  );
  report.timing(
    'DELETE /computers/{id}',
    { api: api.remove, raw: raw.remove },
    { kind: 'absolute', maxMs: 30 },
    'raw = context.close()',
  );
}
