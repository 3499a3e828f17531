import { spawn } from 'node:child_process';
import type { Bench } from '../bench.js';
import { interleave, timed } from '../sampling.js';

/** A process started and awaited the way the exec runner does it, minus HTTP and bookkeeping. */
function spawnTrue(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', 'true'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`sh exited ${code}`)),
    );
  });
}

export async function benchExec({ server, client, report }: Bench): Promise<void> {
  const { id } = await client.create();
  await server.core.browsers.whenWarm();
  const path = `/computers/${id}/exec/sync`;
  const execTrue = async () => {
    const answer = (await client.request('POST', path, { command: 'true' })) as {
      exit_code?: number;
    };
    if (answer.exit_code !== 0) throw new Error(`exec/sync answered ${JSON.stringify(answer)}`);
  };
  try {
    const [api, raw] = await interleave(10, 100, [() => timed(execTrue), () => timed(spawnTrue)]);
    report.timing(
      'exec `true` round trip (/exec/sync)',
      { api, raw },
      { kind: 'absolute', maxMs: 30 },
      'raw = child_process.spawn of /bin/sh -c true in the bench process, until close',
    );
  } finally {
    await client.timed('DELETE', `/computers/${id}`);
  }
}
