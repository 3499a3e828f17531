import { execFile } from 'node:child_process';
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processesOnDisplay } from '../helpers/desktop.js';
import { commandOf, processesWith } from '../helpers/processes.js';
import { eventually, startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * A second organization attacks through every door that runs code: exec, exec/sync, debug, a
 * desktop's terminal and window manager, the X display. Everything here is real: bubblewrap,
 * Xvfb, xterm, openbox.
 */

const PROVIDER_KEY_VARIABLE = 'BT_TEST_PROVIDER_KEY';
const CANARY = 'canary-4f1d2a';

/** What a command of a computer sees: the parts an attacker would look at. */
const SNOOP = [
  'id -u',
  'pwd',
  'env | sort',
  'ls / | tr "\\n" " "; echo',
  'ls /proc | grep -c "^[0-9]"',
].join('; echo ---; ');

let server: TestServer;
let acme: string;

async function sync(key: string, computer: string, body: Record<string, unknown>) {
  return server.request('POST', `/computers/${computer}/exec/sync`, body, { key });
}

async function create(key: string, body: Record<string, unknown> = {}) {
  const response = await server.request('POST', '/computers', body, { key });
  expect(response.status, response.text).toBe(200);
  return response.body.id as string;
}

async function allow(
  org: string,
  what: { exec?: boolean; desktops?: boolean; network?: boolean } | null,
) {
  const patched = await server.request('PATCH', '/settings', { organizations: { [org]: what } });
  expect(patched.status, patched.text).toBe(200);
}

/** Runs an X client on the host against a display, with exactly the environment given. */
function xClient(env: Record<string, string>): Promise<{ ok: boolean; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'xdotool',
      ['getmouselocation'],
      { env: { PATH: process.env.PATH!, ...env }, timeout: 5000 },
      (error, _stdout, stderr) => resolve({ ok: !error, stderr }),
    );
  });
}

beforeAll(async () => {
  process.env[PROVIDER_KEY_VARIABLE] = CANARY;
  process.env.BENCHTOP_TEST_CANARY = CANARY;
  server = await startTestServer({
    models: {
      providers: {
        canary: { provider: 'openai', api_key_env: PROVIDER_KEY_VARIABLE },
      },
    },
  });
  // Benchtop's own files, as an attacker would look for them.
  writeFileSync(
    join(server.dataDir, 'config.json'),
    JSON.stringify({ models: { providers: { stored: { provider: 'openai', api_key: CANARY } } } }),
  );
  acme = server.core.keys.create('acme').key;
});

afterAll(async () => {
  delete process.env[PROVIDER_KEY_VARIABLE];
  delete process.env.BENCHTOP_TEST_CANARY;
  await server?.close();
});

describe("another organization's computers", () => {
  it('get no shell commands and no desktops until the owner allows them', async () => {
    const computer = await create(acme);
    const refused = await sync(acme, computer, { command: 'echo ran' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'exec_disabled' });
    expect(refused.body.message).toContain('organizations.acme.exec');
    const streamed = await server.request(
      'POST',
      `/computers/${computer}/exec`,
      { command: 'echo ran' },
      { key: acme },
    );
    expect(streamed.text).not.toContain('ran');
    const debug = await server.request(
      'POST',
      `/computers/${computer}/debug`,
      { command: 'echo ran' },
      { key: acme },
    );
    expect(debug.text).not.toContain('"ran');
    const desktop = await server.request('POST', '/computers', { kind: 'desktop' }, { key: acme });
    expect(desktop.status).toBe(403);
    expect(desktop.body.message).toContain('organizations.acme.desktops');
    const host = await server.request(
      'POST',
      '/computers',
      { kind: 'desktop', host_display: true },
      { key: acme },
    );
    expect(host.status).toBe(403);
    await server.request('DELETE', `/computers/${computer}`, undefined, { key: acme });
  });

  it("run commands in a sandbox that holds only the computer's workspace", async () => {
    await allow('acme', { exec: true });
    try {
      const computer = await create(acme);
      const neighbour = await create(acme);
      await sync(acme, neighbour, { command: `echo ${CANARY} > neighbour.txt` });

      const seen = await sync(acme, computer, { command: SNOOP });
      expect(seen.body.exit_code).toBe(0);
      const [uid, cwd, env, root, processes] = (seen.body.stdout as string)
        .split('---')
        .map((part) => part.trim());
      expect(uid).not.toBe('0');
      expect(cwd).toBe('/workspace');
      expect(env).not.toContain('BENCHTOP');
      expect(env).not.toContain(CANARY);
      expect(root!.split(' ').sort()).toEqual(
        expect.arrayContaining(['etc', 'proc', 'tmp', 'usr', 'workspace']),
      );
      expect(root).not.toMatch(/\b(root|home|work|var|run)\b/);
      // Its own processes only: the sandbox's init, its keeper, the shell and ls.
      expect(Number(processes)).toBeLessThan(8);

      // Benchtop's files by every path: absolute, through a link, as cwd, by search.
      const dataDir = server.dataDir;
      const attempts = await sync(acme, computer, {
        command: [
          `cat ${dataDir}/config.json`,
          `ln -s ${dataDir} data && cat data/config.json`,
          `cat /proc/1/root${dataDir}/config.json`,
          `grep -rsl ${CANARY} / --exclude-dir=proc --exclude-dir=usr --exclude-dir=dev`,
          'cat /etc/shadow',
          `echo owner > ${dataDir}/keys.json`,
        ].join('; '),
      });
      expect(attempts.text).not.toContain(CANARY);
      expect(attempts.body.stdout).not.toMatch(/root:/);
      const cwdOutside = await sync(acme, computer, { command: 'pwd', cwd: dataDir });
      expect(cwdOutside.status).toBe(400);
      expect(cwdOutside.body.param).toBe('cwd');
      const throughLink = await sync(acme, computer, { command: 'pwd', cwd: 'data' });
      expect(throughLink.status).toBe(400);

      // The workspace is the computer's own folder on the host; /tmp is its own too.
      await sync(acme, computer, { command: 'echo mine > note.txt; echo temp > /tmp/t.txt' });
      const workspace = server.core.computers.get('acme', computer).spec.workspace;
      expect(readdirSync(workspace)).toContain('note.txt');
      const otherTmp = await sync(acme, neighbour, { command: 'cat /tmp/t.txt' });
      expect(otherTmp.body.exit_code).not.toBe(0);

      // The key store is unchanged: no owner key was written.
      expect((await server.request('GET', '/keys')).status).toBe(200);
      expect(server.core.keys.verify('owner')).toBeUndefined();
      for (const id of [computer, neighbour])
        await server.request('DELETE', `/computers/${id}`, undefined, { key: acme });
    } finally {
      await allow('acme', null);
    }
  });

  it('lose everything they started when the computer ends, however it detached', async () => {
    await allow('acme', { exec: true });
    try {
      const computer = await create(acme);
      const ran = await sync(acme, computer, {
        command:
          'setsid sh -c "sleep 300.201 > /dev/null 2>&1 &" < /dev/null; nohup sleep 300.202 > /dev/null 2>&1 &',
      });
      expect(ran.body.exit_code).toBe(0);
      // A program left running by one command is still there for the next (the detached ones
      // start on their own time, so later commands look until both are up).
      await eventually(async () => {
        const later = await sync(acme, computer, { command: 'ps -eo args | grep -c "^sleep 300"' });
        return later.body.stdout.trim() === '2';
      }, 10_000);
      await eventually(
        () =>
          processesWith('sleep 300.201').length > 0 && processesWith('sleep 300.202').length > 0,
        10_000,
      );
      await server.request('DELETE', `/computers/${computer}`, undefined, { key: acme });
      await eventually(() => processesWith('300.20').length === 0, 10_000);
    } finally {
      await allow('acme', null);
    }
  });
});

describe('an organization without network', () => {
  it('reaches nothing, not even loopback, while its desktop still draws', async () => {
    const port = new URL(server.url).port;
    const connect = `node -e "require('net').connect(${port}, '127.0.0.1').on('connect', () => { console.log('connected'); process.exit(0) }).on('error', (e) => { console.log(e.code); process.exit(3) })"`;
    await allow('acme', { exec: true, desktops: true });
    const open = await create(acme);
    expect((await sync(acme, open, { command: connect })).body.stdout).toBe('connected\n');
    await allow('acme', { exec: true, desktops: true, network: false });
    try {
      const closed = await create(acme);
      const refused = await sync(acme, closed, { command: connect });
      expect(refused.body, JSON.stringify(refused.body)).toMatchObject({ exit_code: 3 });
      expect(refused.body.stdout).not.toContain('connected');
      const desktop = await create(acme, { kind: 'desktop' });
      const drawn = await sync(acme, desktop, { command: 'xdotool getmouselocation' });
      expect(drawn.body).toMatchObject({ exit_code: 0 });
      for (const id of [open, closed, desktop])
        await server.request('DELETE', `/computers/${id}`, undefined, { key: acme });
    } finally {
      await allow('acme', null);
    }
  });
});

describe('organizations in settings', () => {
  it('are validated, owner-only, and removed by null', async () => {
    const owner = await server.request('PATCH', '/settings', {
      organizations: { local: { exec: true } },
    });
    expect(owner.status).toBe(400);
    expect(owner.body.message).toContain('exec.enabled');
    const unknown = await server.request('PATCH', '/settings', {
      organizations: { acme: { shell: true } },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/shell.*exec, desktops/);
    const byThem = await server.request(
      'PATCH',
      '/settings',
      { organizations: { acme: { exec: true } } },
      { key: acme },
    );
    expect(byThem.status).toBe(403);
    await allow('acme', { exec: true });
    expect((await server.request('GET', '/settings')).body.settings.organizations).toEqual({
      acme: { exec: true, desktops: false, network: true },
    });
    await allow('acme', null);
    expect((await server.request('GET', '/settings')).body.settings.organizations).toEqual({});
  });
});

describe('desktops', () => {
  it('have a display only their own programs can connect to', async () => {
    const first = await create(server.key, { kind: 'desktop' });
    const second = await create(server.key, { kind: 'desktop' });
    try {
      const display = server.core.computers.get('local', first).spec.env.DISPLAY!;
      // Any local process without the desktop's cookie is refused...
      const stranger = await xClient({ DISPLAY: display });
      expect(stranger.ok).toBe(false);
      expect(stranger.stderr).toMatch(/authori[sz]ation/i);
      // ...so is another desktop's sandbox, which holds only its own cookie...
      const neighbour = await sync(server.key, second, {
        command: `DISPLAY=${display} xdotool getmouselocation`,
      });
      expect(neighbour.body.exit_code).not.toBe(0);
      // ...while the desktop's own commands reach it.
      const own = await sync(server.key, first, { command: 'xdotool getmouselocation' });
      expect(own.body).toMatchObject({ exit_code: 0 });
      expect(own.body.stdout).toMatch(/^x:\d+ y:\d+/);
    } finally {
      for (const id of [first, second]) await server.request('DELETE', `/computers/${id}`);
    }
  });

  it('have no terminal and no program launcher where commands are off', async () => {
    await allow('acme', { desktops: true });
    try {
      const desktop = await create(acme, { kind: 'desktop' });
      const workspace = server.core.computers.get('acme', desktop).spec.workspace;
      const act = (path: string, body: unknown) =>
        server.request('POST', `/computers/${desktop}/${path}`, body, { key: acme });
      // Where a terminal would be, then the window manager's desktop menu (right click on the
      // background) and its first entries, then the keys that start programs elsewhere.
      await act('click', { x: 200, y: 150 });
      await act('type', { text: 'touch /workspace/typed\n' });
      await act('click', { x: 1100, y: 650, button: 'right' });
      for (const key of ['Down', 'Down', 'Return']) await act('hotkey', { keys: [key] });
      await act('type', { text: 'touch /workspace/menu\n' });
      await act('hotkey', { keys: ['Super', 'e'] });
      await act('hotkey', { keys: ['Alt', 'F2'] });
      await act('type', { text: 'touch /workspace/keys\n' });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(readdirSync(workspace).filter((name) => !name.startsWith('.'))).toEqual([]);
      const display = server.core.computers.get('acme', desktop).spec.env.DISPLAY!;
      const programs = (await processesOnDisplay(display)).map(commandOf);
      expect(programs.some((command) => command.startsWith('openbox'))).toBe(true);
      expect(programs.filter((command) => /xterm|sh -c|x-terminal/.test(command))).toEqual([]);
      await server.request('DELETE', `/computers/${desktop}`, undefined, { key: acme });
    } finally {
      await allow('acme', null);
    }
  });

  it("run their terminal in the computer's sandbox where commands are allowed", async () => {
    await allow('acme', { desktops: true, exec: true });
    try {
      const desktop = await create(acme, { kind: 'desktop' });
      const workspace = server.core.computers.get('acme', desktop).spec.workspace;
      await server.request(
        'POST',
        `/computers/${desktop}/click`,
        { x: 200, y: 150 },
        { key: acme },
      );
      await server.request(
        'POST',
        `/computers/${desktop}/type`,
        { text: `ls ${server.dataDir} > seen.txt 2>&1; env >> seen.txt\n` },
        { key: acme },
      );
      const seen = await eventually(async () => {
        const text = await import('node:fs/promises').then((fs) =>
          fs.readFile(join(workspace, 'seen.txt'), 'utf8').catch(() => ''),
        );
        return text.includes('PATH=') && text;
      });
      expect(seen).toMatch(/No such file or directory/);
      expect(seen).not.toContain('BENCHTOP');
      expect(seen).not.toContain(CANARY);
      await server.request('DELETE', `/computers/${desktop}`, undefined, { key: acme });
    } finally {
      await allow('acme', null);
    }
  });
});

describe("the owner's computers", () => {
  it('are sandboxed by default, and run on the host when exec.sandbox_owner is false', async () => {
    const computer = await create(server.key);
    const sandboxed = await sync(server.key, computer, {
      command: `pwd; test -e ${server.dataDir} && echo visible; env`,
    });
    expect(sandboxed.body.stdout).toMatch(/^\/workspace\n/);
    expect(sandboxed.body.stdout).not.toContain('visible');
    expect(sandboxed.body.stdout).not.toContain(CANARY);

    const patched = await server.request('PATCH', '/settings', { exec: { sandbox_owner: false } });
    expect(patched.status).toBe(200);
    try {
      const onHost = await create(server.key);
      const ran = await sync(server.key, onHost, {
        command: `test -e ${server.dataDir} && echo visible; env`,
      });
      expect(ran.body.stdout).toContain('visible');
      // Even on the host, Benchtop's variables and provider keys stay out of commands.
      expect(ran.body.stdout).not.toContain('BENCHTOP_');
      expect(ran.body.stdout).not.toContain(CANARY);
      await server.request('DELETE', `/computers/${onHost}`);
    } finally {
      await server.request('PATCH', '/settings', { exec: { sandbox_owner: null } });
    }
    await server.request('DELETE', `/computers/${computer}`);
  });

  it("lose a running desktop's terminal when exec is switched off", async () => {
    const desktop = await create(server.key, { kind: 'desktop' });
    const workspace = server.core.computers.get('local', desktop).spec.workspace;
    const typeLine = async (line: string) => {
      await server.request('POST', `/computers/${desktop}/click`, { x: 200, y: 150 });
      await server.request('POST', `/computers/${desktop}/type`, { text: line });
    };
    await typeLine('touch before\n');
    await eventually(() => existsSync(join(workspace, 'before')));
    await server.request('PATCH', '/settings', { exec: { enabled: false } });
    try {
      // The terminal is gone from the display, so what is typed next has nowhere to run.
      await eventually(async () => !(await terminalOn(desktop, 'local')));
      await typeLine('touch after\n');
      expect(existsSync(join(workspace, 'after'))).toBe(false);
    } finally {
      await server.request('PATCH', '/settings', { exec: { enabled: null } });
    }
    await server.request('DELETE', `/computers/${desktop}`);
  });

  it('get a desktop without a terminal when exec is off', async () => {
    await server.request('PATCH', '/settings', { exec: { enabled: false } });
    try {
      const desktop = await create(server.key, { kind: 'desktop' });
      const workspace = server.core.computers.get('local', desktop).spec.workspace;
      expect(await terminalOn(desktop, 'local')).toBe(false);
      await server.request('POST', `/computers/${desktop}/click`, { x: 200, y: 150 });
      await server.request('POST', `/computers/${desktop}/type`, { text: 'touch typed\n' });
      expect(existsSync(join(workspace, 'typed'))).toBe(false);
      await server.request('DELETE', `/computers/${desktop}`);
    } finally {
      await server.request('PATCH', '/settings', { exec: { enabled: null } });
    }
  });
});

/** Whether a terminal (or a shell) runs on the computer's display. */
async function terminalOn(id: string, org: string): Promise<boolean> {
  const display = server.core.computers.get(org, id).spec.env.DISPLAY!;
  const programs = (await processesOnDisplay(display)).map(commandOf);
  return programs.some((command) => /xterm|sh -c|x-terminal/.test(command));
}
