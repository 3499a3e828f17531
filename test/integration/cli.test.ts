import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { benchtopEnv, BIN, onBanner, serveProcess } from '../helpers/benchtop-process.js';
import { commandOf, descendants, isAlive } from '../helpers/processes.js';
import { eventually } from '../helpers/test-server.js';

const running: ChildProcess[] = [];

type Started = { child: ChildProcess; url: string; output: string[] };

/** Starts `benchtop serve` and resolves once it printed its listening line. */
function serve(
  dataDir: string,
  env: Record<string, string> = {},
  args = ['--port', '0'],
): Promise<Started> {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    env: benchtopEnv({ BENCHTOP_DATA_DIR: dataDir, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  const output: string[] = [];
  return new Promise((resolve, reject) => {
    onBanner(child, output, (url) => resolve({ child, url, output }));
    child.on('exit', (code) =>
      reject(new Error(`benchtop exited with ${code}: ${output.join('\n')}`)),
    );
  });
}

/** Runs `benchtop` to its end; one still running after 30 s (a serve that started) is killed. */
function run(args: string[], dataDir: string, env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], {
    env: benchtopEnv({ BENCHTOP_DATA_DIR: dataDir, ...env }),
    encoding: 'utf8',
    timeout: 30_000,
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

// Each test starts whole Benchtop processes (a server with its Chromium, the command line several
// times): the IP-block test took 35 s in a full run on two cores, 10 s alone.
const PROCESS_TESTS = { timeout: 90_000 };

describe('benchtop serve', PROCESS_TESTS, () => {
  it('lists and lifts IP blocks of the running server from the command line', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-blocks-'));
    const { child, url, output } = await serve(dataDir, {
      BENCHTOP_LIMITS_AUTH_FAILURES_BEFORE_BLOCK: '2',
    });
    const key = output.find((line) => line.startsWith('the window: '))!.split('#key=')[1]!;
    const get = (auth: string) =>
      fetch(`${url}/computers`, { headers: { authorization: `Bearer ${auth}` } });
    expect((await get('sk_wrong_aaaaaaaaaaaaaaaaaaaa')).status).toBe(401);
    expect((await get('sk_wrong_aaaaaaaaaaaaaaaaaaaa')).status).toBe(401);
    // Guessing is blocked; a valid key still works from the blocked address.
    expect((await get('sk_wrong_aaaaaaaaaaaaaaaaaaaa')).status).toBe(403);
    expect((await get(key)).status).toBe(200);

    const listed = run(['ip-blocks'], dataDir);
    expect(listed.stdout).toMatch(/^127\.0\.0\.1 +2 failed authentications +blocked until \d{4}-/m);
    const lifted = run(['ip-blocks', 'lift', '127.0.0.1'], dataDir);
    expect(lifted.status, lifted.stderr).toBe(0);
    expect(lifted.stdout).toContain('lifted the block of 127.0.0.1');
    expect((await get('sk_wrong_aaaaaaaaaaaaaaaaaaaa')).status).toBe(401);
    expect(run(['ip-blocks'], dataDir).stdout).toContain('no address is blocked');
    child.kill('SIGTERM');
    await exited(child);
    const nobody = run(['ip-blocks', 'lift', '--all'], dataDir);
    expect(nobody.status).toBe(2);
    expect(nobody.stderr).toContain('no running Benchtop');
  });

  it('prints a /ui/ link whose key works only while this process runs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-ui-'));
    const { child, url, output } = await serve(dataDir);
    const link = output.find((line) => line.startsWith('the window: '))!.slice(12);
    expect(link).toMatch(new RegExp(`^${url}/ui/#key=sk_[A-Za-z0-9_-]{32}$`));
    const key = link.split('#key=')[1]!;
    const page = await fetch(`${url}/ui/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toContain('<title>Benchtop</title>');
    const listed = await fetch(`${url}/computers`, { headers: { authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);

    const again = await serve(dataDir);
    const stale = await fetch(`${again.url}/computers`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(stale.status).toBe(401);
    again.child.kill('SIGTERM');
    await exited(again.child);
  });

  it('prints its URL and a first key, serves, and SIGTERM leaves no Chromium behind', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    const { child, url, output } = await serve(dataDir);
    expect(output[0]).toBe(`listening on ${url}`);
    const key = output.find((line) => line.includes('TZAFON_API_KEY='))!.split('=')[1]!;
    expect(output).toContain(`  export LIGHTCONE_BASE_URL=${url}`);

    const created = await fetch(`${url}/computers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    expect(created.status).toBe(200);
    const chromium = descendants(child.pid!).filter((pid) => /chrom/i.test(commandOf(pid)));
    expect(chromium.length).toBeGreaterThan(0);

    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    await eventually(() => Promise.resolve(chromium.every((pid) => !isAlive(pid))));

    // A second start keeps the stored key and prints no new one.
    const again = await serve(dataDir);
    expect(again.output.some((line) => line.includes('TZAFON_API_KEY'))).toBe(false);
    const listed = await fetch(`${again.url}/computers`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(await listed.json()).toEqual([]);
    again.child.kill('SIGINT');
    expect(await exited(again.child)).toBe(0);
  });

  it('closes in order when its terminal is closed (SIGHUP): no X server or Chromium left', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-hup-'));
    const key = 'sk_ci_key_0123456789abcdef';
    const { child, url } = await serve(dataDir, { BENCHTOP_API_KEY: key });
    const created = await fetch(`${url}/computers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'desktop' }),
    });
    expect(created.status).toBe(200);
    // The X server leads a process group of its own: no hang-up reaches it from the terminal.
    const started = descendants(child.pid!).filter((pid) => /Xvfb|chrom/i.test(commandOf(pid)));
    expect(started.some((pid) => commandOf(pid).includes('Xvfb'))).toBe(true);

    child.kill('SIGHUP');
    expect(await exited(child)).toBe(0);
    await eventually(() => Promise.resolve(started.every((pid) => !isAlive(pid))));
  });

  it('accepts BENCHTOP_API_KEY and BENCHTOP_PORT', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    const key = 'sk_ci_key_0123456789abcdef';
    const { child, url, output } = await serve(
      dataDir,
      { BENCHTOP_API_KEY: key, BENCHTOP_PORT: '0' },
      [],
    );
    expect(output.some((line) => line.includes('TZAFON_API_KEY'))).toBe(false);
    const list = await fetch(`${url}/computers`, { headers: { authorization: `Bearer ${key}` } });
    expect(list.status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  });

  it('records a computer and serves its video and events from a data dir in a dot folder, as on Linux', async () => {
    // The default data dir is ~/.config/benchtop: a path Express would not send a file from.
    const dataDir = join(mkdtempSync(join(tmpdir(), 'benchtop-cli-home-')), '.config', 'benchtop');
    const key = 'sk_ci_key_recorded_0123456789ab';
    const { child, url } = await serve(dataDir, { BENCHTOP_API_KEY: key });
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const { id } = (await (await call('POST', '/computers', {})).json()) as { id: string };
    expect((await call('POST', `/computers/${id}/navigate`, { url: `${url}/ui/` })).status).toBe(
      200,
    );
    expect((await call('POST', `/computers/${id}/click`, { x: 10, y: 10 })).status).toBe(200);
    expect((await call('DELETE', `/computers/${id}`)).status).toBe(204);
    await eventually(async () => {
      const recording = (await (await call('GET', `/computers/${id}/recording`)).json()) as {
        status: string;
      };
      return recording.status === 'complete';
    }, 30_000);

    const video = await call('GET', `/computers/${id}/recording/video`);
    expect(video.status).toBe(200);
    expect(video.headers.get('content-type')).toBe('video/webm');
    const bytes = Buffer.from(await video.arrayBuffer());
    expect(bytes.readUInt32BE(0)).toBe(0x1a45dfa3);
    const events = await call('GET', `/computers/${id}/recording/events`);
    expect(events.status).toBe(200);
    expect(await events.text()).toContain('"type":"action_request"');
    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
  });

  it('says on stderr what goes wrong in the background: an item the webhook did not take', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    // Nothing listens on port 9: the model and the webhook both refuse the connection.
    const dead = 'http://127.0.0.1:9';
    const settings = {
      notifications: { webhook_url: `${dead}/hook` },
      models: {
        default: 'dead',
        providers: { dead: { provider: 'openai-compatible', base_url: `${dead}/v1` } },
      },
    };
    writeFileSync(join(dataDir, 'config.json'), JSON.stringify(settings), { mode: 0o600 });
    const benchtop = await serveProcess(dataDir);
    running.push(benchtop.child);
    // The task fails at its first step: a "failed" item for a person, posted to the webhook.
    const task = await benchtop.request('POST', '/agent/tasks', { instruction: 'look around' });
    expect(task.status, task.text).toBe(200);
    const said = () => benchtop.errors.join('');
    await eventually(() => said().includes('the notifications webhook did not take'), 30_000);
    expect(said()).toContain(
      `benchtop: the notifications webhook did not take the failed item (${task.body.task_id})`,
    );
    benchtop.child.kill('SIGTERM');
    expect(await benchtop.exited()).toBe(0);
  });

  it('says in one line that its port is taken, and shows the first key at the next start', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    try {
      const refused = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
        env: benchtopEnv({ BENCHTOP_DATA_DIR: dataDir }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      refused.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      expect(await exited(refused)).toBe(2);
      expect(stderr).toBe(
        `benchtop: port ${port} of 127.0.0.1 is in use by another program (another Benchtop?); choose another with --port, BENCHTOP_PORT or server.port (0 picks a free one)\n`,
      );
    } finally {
      taken.close();
    }
    // Nothing was stored that nobody saw: this start prints the first key, and it works.
    const { child, url, output } = await serve(dataDir);
    const key = output.find((line) => line.includes('TZAFON_API_KEY='))?.split('=')[1];
    expect(key, output.join('\n')).toMatch(/^sk_/);
    const listed = await fetch(`${url}/computers`, { headers: { authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(200);
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
  });

  it('listening on every address, hands out URLs this machine opens: 127.0.0.1, not 0.0.0.0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    const { child, url, output } = await serve(dataDir, {}, ['--port', '0', '--host', '0.0.0.0']);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(output).toContain(
      "it listens on every address of this machine (server.host 0.0.0.0): another machine reaches it by this machine's name or address once server.allowed_hosts lists that name",
    );
    const key = output.find((line) => line.includes('TZAFON_API_KEY='))!.split('=')[1]!;
    const created = await fetch(`${url}/computers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    const computer = (await created.json()) as { id: string; endpoints: { live_view: string } };
    expect(computer.endpoints.live_view).toBe(`${url}/ui/#/computers/${computer.id}`);
    // What it hands out opens: a screenshot's URL.
    const shot = await fetch(`${url}/computers/${computer.id}/screenshot`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    const { result } = (await shot.json()) as { result: { screenshot_url: string } };
    expect(result.screenshot_url.startsWith(`${url}/`), result.screenshot_url).toBe(true);
    const image = await fetch(result.screenshot_url);
    expect(image.headers.get('content-type')).toBe('image/png');
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
  });

  it('refuses a second Benchtop on the data dir one runs on, which goes on whole', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    // A spare desktop: its folder in the data dir is what a second run would have taken.
    const { child, url } = await serve(dataDir, { BENCHTOP_DESKTOP_WARM_POOL: '1' });
    const spares = join(dataDir, 'computers', 'spare-desktops');
    await eventually(() => existsSync(spares) && readdirSync(spares).length > 0, 30_000);
    const before = readdirSync(spares);

    const second = run(['serve', '--port', '0'], dataDir);
    expect(second.status).toBe(2);
    expect(second.stderr).toBe(
      `benchtop: another Benchtop (process ${child.pid}) runs on the data dir ${dataDir}: use that one, stop it first, or give this one another data dir with BENCHTOP_DATA_DIR\n`,
    );
    expect(readdirSync(spares)).toEqual(before);
    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(200);
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
  });

  it('refuses to start with a bad setting, naming it', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    const file = join(dataDir, 'override.json');
    writeFileSync(file, JSON.stringify({ browser: { warm_pol: 1 } }));
    const result = run(['serve'], dataDir, { BENCHTOP_CONFIG: file });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('unknown setting browser.warm_pol');
    const port = run(['serve', '--port', 'many'], dataDir);
    expect(port.stderr).toContain('setting server.port in command-line flags');
  });

  it('refuses a config.json or keys.json that is not JSON, naming it, and leaves it as it was', () => {
    const start = ['serve', '--port', '0'];
    const readers = { 'config.json': [start], 'keys.json': [start, ['keys', 'list']] };
    for (const [name, commands] of Object.entries(readers)) {
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
      const file = join(dataDir, name);
      // A comma too many, as a hand edit leaves it.
      writeFileSync(file, '{"server": {"port": 4422,}}\n');
      for (const args of commands) {
        const result = run(args, dataDir);
        expect(result.status, `${name}: ${args.join(' ')}`).toBe(2);
        expect(result.stderr).toMatch(
          new RegExp(
            `^benchtop: ${file} is not valid JSON \\(.+\\); fix it, or move it away to start without what it holds\\n$`,
          ),
        );
      }
      expect(readFileSync(file, 'utf8')).toBe('{"server": {"port": 4422,}}\n');
    }
  });

  it('refuses a config.json or keys.json that holds JSON but not an object, saying what it holds', () => {
    const held = {
      '"port 4422"': 'a string',
      '[4422]': 'an array',
      null: 'null',
      '4422': 'a number',
    };
    for (const name of ['config.json', 'keys.json']) {
      for (const [content, what] of Object.entries(held)) {
        const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
        const file = join(dataDir, name);
        writeFileSync(file, content);
        const result = run(['serve', '--port', '0'], dataDir);
        expect(result.status, `${name}: ${content}`).toBe(2);
        expect(result.stderr).toBe(
          `benchtop: ${file} holds ${what}, not a JSON object; fix it, or move it away to start without what it holds\n`,
        );
        expect(readFileSync(file, 'utf8')).toBe(content);
      }
    }
  });

  it('refuses a database or vault key that is not one, naming it, and leaves it as it was', () => {
    const cases = [
      {
        name: 'benchtop.sqlite',
        content: 'not a database, a note someone saved here\n',
        says: 'is not a Benchtop database (file is not a database): restore it from a backup, or move it away to start with an empty one (what it held stays in the moved file)',
      },
      {
        name: 'vault.key',
        content: 'x\n',
        says: 'is not a vault key (2 bytes, not 32): restore it from a backup, or delete it and set every secret again',
      },
    ];
    for (const { name, content, says } of cases) {
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
      const file = join(dataDir, name);
      writeFileSync(file, content);
      const result = run(['serve', '--port', '0'], dataDir);
      expect(result.status, name).toBe(2);
      expect(result.stderr).toBe(`benchtop: ${file} ${says}\n`);
      expect(readFileSync(file, 'utf8')).toBe(content);
    }
  });

  it('refuses a database a newer Benchtop wrote, and writes nothing to it', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
    const file = join(dataDir, 'benchtop.sqlite');
    const newer = new Database(file);
    newer.pragma('user_version = 999');
    newer.close();
    const before = readFileSync(file);
    const result = run(['serve', '--port', '0'], dataDir);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^benchtop: ${file} was written by a newer Benchtop \\(schema 999; this one knows up to \\d+\\): run that version, or this one on another data dir \\(BENCHTOP_DATA_DIR\\)\\n$`,
      ),
    );
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('refuses a data dir it cannot make, in one line that says what to set', () => {
    // Under a file: no user, root included, can make a folder there.
    const file = join(mkdtempSync(join(tmpdir(), 'benchtop-cli-')), 'a-file');
    writeFileSync(file, '');
    const dataDir = join(file, 'data');
    for (const args of [['serve', '--port', '0'], ['keys', 'list'], ['mcp']]) {
      const result = run(args, dataDir);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toBe(
        `benchtop: cannot use the data dir ${dataDir} (ENOTDIR: not a directory, mkdir '${dataDir}'); set BENCHTOP_DATA_DIR to a folder this user can write\n`,
      );
    }
  });
});

describe('benchtop keys', () => {
  // Six CLI runs and a server, one after another: on a loaded two-core machine that takes a while.
  it(
    'creates, lists and revokes keys, and a running server honours the revocation at once',
    { timeout: 90_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-cli-'));
      const created = run(['keys', 'create', '--org', 'acme'], dataDir);
      expect(created.status).toBe(0);
      const key = created.stdout.trim().split('\n').at(-1)!;
      const keyId = /created (key_\S+) for organization "acme"/.exec(created.stdout)![1]!;
      expect(key).toMatch(/^sk_/);
      const listed = run(['keys', 'list'], dataDir).stdout;
      expect(listed).toContain(`${keyId}  acme  ${key.slice(0, 7)}…`);
      expect(listed).not.toContain(key);

      const { child, url } = await serve(dataDir);
      const status = async () =>
        (await fetch(`${url}/computers`, { headers: { authorization: `Bearer ${key}` } })).status;
      expect(await status()).toBe(200);
      expect(run(['keys', 'revoke', keyId], dataDir).stdout).toContain(`revoked ${keyId}`);
      await eventually(async () => (await status()) === 401, 2000);
      expect(run(['keys', 'list'], dataDir).stdout).toContain('revoked');
      expect(run(['keys', 'revoke', 'key_nope'], dataDir).status).toBe(2);
      child.kill('SIGTERM');
      await exited(child);
    },
  );
});
