import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { groupAlive, launch, runProgram } from '../../src/main/core/runtime/process-supervisor.js';
import { HELPER_TITLE } from '../../src/main/core/runtime/spawn-relay.js';
import { killAll } from '../helpers/benchtop-process.js';
import { commandOf, isAlive, parentOf } from '../helpers/processes.js';
import { eventually } from '../helpers/test-server.js';

const left: number[] = [];
afterAll(() => killAll(left));

function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  return new Promise((resolve) => stream.once('end', () => resolve(Buffer.concat(chunks))));
}

describe('programs started by the spawn relay', () => {
  it('are children of the helper, not of the server, which only hears of them', async () => {
    const program = await launch('sleep', ['30'], { stdio: 'ignore' });
    left.push(program.pid);
    const helper = parentOf(program.pid);
    expect(helper).not.toBe(process.pid);
    expect(parentOf(helper)).toBe(process.pid);
    expect(commandOf(helper)).toMatch(new RegExp(`^${HELPER_TITLE}\\b`));
    program.kill();
    expect(await program.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('deliver every byte of their output, its standard input, and the exit code', async () => {
    // 8 MiB of varied bytes, on stdout; what came in on stdin, on stderr.
    const script = 'head -c 8388608 /dev/urandom | tee /tmp/benchtop-relay-$$ ; cat >&2; exit 7';
    const program = await launch('/bin/sh', ['-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
    const [stdout, stderr] = [collect(program.child.stdout!), collect(program.child.stderr!)];
    program.child.stdin!.end('from stdin');
    expect(await program.exited).toEqual({ code: 7, signal: null });
    const written = readFileSync(`/tmp/benchtop-relay-${program.pid}`);
    const out = await stdout;
    expect(out.length).toBe(8 * 2 ** 20);
    expect(createHash('sha256').update(out).digest('hex')).toBe(
      createHash('sha256').update(written).digest('hex'),
    );
    expect((await stderr).toString()).toBe('from stdin');
    await runProgram('rm', ['-f', `/tmp/benchtop-relay-${program.pid}`]);
  });

  it('deliver what they write to a fourth descriptor (an X server says its display so)', async () => {
    const program = await launch('/bin/sh', ['-c', 'echo :42 >&3; exec 3>&-; exec sleep 30'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    left.push(program.pid);
    expect(parentOf(program.pid)).not.toBe(process.pid);
    const fourth = program.child.stdio[3] as Readable;
    expect((await collect(fourth)).toString()).toBe(':42\n');
    program.kill();
    expect(await program.exited).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('block on a full pipe while their reader is paused, and go on when it reads again', async () => {
    const program = await launch('head', ['-c', String(64 * 2 ** 20), '/dev/zero'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    left.push(program.pid);
    const stdout = program.child.stdout!;
    stdout.pause();
    // Nothing reads: 64 MiB cannot all be buffered, so the program is still writing.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(program.running).toBe(true);
    expect(stdout.readableLength).toBeLessThan(8 * 2 ** 20);
    const all = collect(stdout);
    stdout.resume();
    expect((await all).length).toBe(64 * 2 ** 20);
    expect(await program.exited).toEqual({ code: 0, signal: null });
  });

  it('end by SIGKILL with the helper, and the next program gets a new helper', async () => {
    const program = await launch('/bin/sh', ['-c', 'sleep 60 & exec sleep 61'], {
      stdio: 'ignore',
    });
    left.push(program.pid);
    const helper = parentOf(program.pid);
    process.kill(helper, 'SIGKILL');
    expect(await program.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // Its whole group went with it.
    await eventually(() => !groupAlive(program.pid));
    const next = await runProgram('/bin/sh', ['-c', 'echo $PPID']);
    expect(next.code).toBe(0);
    expect(Number(next.stdout)).not.toBe(helper);
    expect(isAlive(Number(next.stdout))).toBe(true);
  });

  it('refuse what cannot start with the error spawn gives', async () => {
    await expect(launch('/nonexistent/program', [])).rejects.toMatchObject({
      code: 'ENOENT',
      message: 'spawn /nonexistent/program ENOENT',
    });
    await expect(launch('sleep', ['1'], { cwd: '/nonexistent/dir' })).rejects.toMatchObject({
      code: 'ENOENT',
    });
    await expect(launch('echo', ['a\0b'])).rejects.toMatchObject({
      code: 'ERR_INVALID_ARG_VALUE',
    });
  });
});
