import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { killAll, serveProcess, tree, type BenchtopProcess } from '../helpers/benchtop-process.js';
import { startFixtureServer } from '../helpers/fixture-server.js';
import { expectPlayable } from '../helpers/media.js';
import { eventually } from '../helpers/test-server.js';

/**
 * Benchtop SIGKILLed while a computer records runs nothing on the way out. What it wrote as it
 * went stays, and the next start completes the recording up to the kill.
 */

const left: number[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-recording-kill-'));
afterAll(async () => {
  await killAll(left);
  rmSync(dataDir, { recursive: true, force: true });
});

it('a recording of a computer running when Benchtop was killed is kept up to the kill and reads complete', async () => {
  const fixtures = await startFixtureServer();
  const servers: BenchtopProcess[] = [];
  try {
    const first = await serveProcess(dataDir);
    servers.push(first);
    const key = first.firstKey!;
    const created = await first.request('POST', '/computers', {}, key);
    expect(created.status, created.text).toBe(200);
    const id = created.body.id as string;
    const act = (action: Record<string, unknown>) =>
      first.request('POST', `/computers/${id}/execute`, { action }, key);
    await act({ type: 'navigate', url: `${fixtures.url}/recorded.html` });
    expect((await act({ type: 'click', x: 200, y: 140 })).body.status).toBe('success');
    const events = join(dataDir, 'recordings', id, 'events.ndjson');
    // Written as it happens: the click's answer is on disk before the kill.
    await eventually(() => readFileSync(events, 'utf8').includes('"action_response"'));
    await eventually(
      () => readFileSync(join(dataDir, 'recordings', id, 'frames.ndjson'), 'utf8').length > 0,
    );
    left.push(...tree(first.child.pid!));
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    expect(await first.exited()).toBe(null);

    const second = await serveProcess(dataDir);
    servers.push(second);
    const answer = await second.request('GET', `/computers/${id}/recording`, undefined, key);
    expect(answer.status, answer.text).toBe(200);
    const recording = answer.body;
    expect(recording.status).toBe('complete');
    expect(Date.parse(recording.ended_at)).toBeLessThanOrEqual(killedAt);
    expect(recording.files.map((file: { name: string }) => file.name)).toEqual(
      expect.arrayContaining(['events.ndjson', 'video.webm', 'recording.har', 'trace.zip']),
    );

    const lines = (
      await second.request('GET', `/computers/${id}/recording/events`, undefined, key)
    ).text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(
      lines.filter((line) => line.type === 'action_request').map((line) => line.action.type),
    ).toEqual(['navigate', 'click']);
    expect(lines.at(-1)).toMatchObject({ type: 'recording_ended', reason: 'benchtop_stopped' });

    const video = await fetch(`${second.url}/computers/${id}/recording/video`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(video.status).toBe(200);
    const file = join(dataDir, 'recovered.webm');
    writeFileSync(file, Buffer.from(await video.arrayBuffer()));
    const info = await expectPlayable(file, recording.duration_ms);
    expect(info.chapters.map((chapter) => chapter.title.split(' ')[0])).toEqual([
      'navigate',
      'click',
    ]);

    const har = await second.request('GET', `/computers/${id}/recording/har`, undefined, key);
    expect(har.status).toBe(200);
    expect(har.body.log.entries.map((entry: any) => entry.request.url)).toContain(
      `${fixtures.url}/recorded.js`,
    );
  } finally {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGINT');
        await server.exited();
      }
    }
    await fixtures.close();
  }
});
