import type { Bench } from '../bench.js';
import { interleave, timed } from '../sampling.js';

/**
 * Desktop computers (Xvfb + openbox + xterm + nut-js worker). Targets are absolute (issue 3); the
 * worker's own timings (measured with nut-js alone: grab 3.7 ms, click 1.8 ms) are the floor.
 */
export async function benchDesktop({ client, report }: Bench): Promise<void> {
  const createTimes: number[] = [];
  for (let round = 0; round < 8; round++) {
    let id = '';
    createTimes.push(
      await timed(async () => {
        id = ((await client.request('POST', '/computers', { kind: 'desktop' })) as { id: string })
          .id;
      }),
    );
    await client.request('DELETE', `/computers/${id}`);
  }
  report.timing(
    'desktop create (display + wm + terminal + worker)',
    { api: createTimes },
    { kind: 'absolute', maxMs: 1500 },
  );

  const { id } = (await client.request('POST', '/computers', { kind: 'desktop' })) as {
    id: string;
  };
  const act = (path: string, body: unknown) => () =>
    timed(() => client.request('POST', `/computers/${id}/${path}`, body, 'action'));
  try {
    const [shots] = await interleave(5, 40, [act('screenshot', {})]);
    report.timing(
      'desktop screenshot 1280×720 png',
      { api: shots },
      { kind: 'absolute', maxMs: 35 },
    );
    const [clicks] = await interleave(10, 100, [act('click', { x: 900, y: 600 })]);
    report.timing('desktop click', { api: clicks }, { kind: 'absolute', maxMs: 6 });
    // Typed on the empty desktop area (not the terminal), so nothing runs.
    const [typed] = await interleave(3, 30, [act('type', { text: 'abcdefghij0123456789' })]);
    report.timing('desktop type 20 chars', { api: typed }, { kind: 'absolute', maxMs: 60 });
  } finally {
    await client.request('DELETE', `/computers/${id}`);
  }
}
