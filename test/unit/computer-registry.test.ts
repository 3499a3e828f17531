import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CreateComputerBody } from '../../src/shared/computers.js';
import { Settings } from '../../src/main/core/config.js';
import { ComputerEvents } from '../../src/main/core/events/computer-events.js';
import {
  ComputerRegistry,
  KEEP_TERMINATED_MS,
} from '../../src/main/core/computers/computer-registry.js';
import type { ComputerDriver } from '../../src/main/core/computers/drivers/driver.js';
import { OrganizationPolicy } from '../../src/main/core/sandbox/organization-policy.js';
import type { ScreenshotStore } from '../../src/main/core/screenshots/screenshot-store.js';
import { EnvironmentStore } from '../../src/main/core/store/environment-store.js';
import { FakeDriver } from '../helpers/fake-operator.js';
import { ManualClock } from '../helpers/manual-clock.js';

const SECOND = 1000;

function setup(quota = 5, browserOptions: ConstructorParameters<typeof FakeDriver>[1] = {}) {
  const root = mkdtempSync(join(tmpdir(), 'benchtop-registry-'));
  const settings = Settings.parse({});
  const clock = new ManualClock();
  const browser = new FakeDriver('browser', browserOptions);
  const desktop = new FakeDriver('desktop', { savesAfterClose: true, exclusive: 'screen' });
  const environments = new EnvironmentStore(join(root, 'environments'));
  const registry = new ComputerRegistry({
    drivers: new Map<'browser' | 'desktop', ComputerDriver>([
      ['browser', browser],
      ['desktop', desktop],
    ]),
    policy: new OrganizationPolicy(
      () => settings,
      join(root, 'private'),
      () => Promise.resolve({ available: false, reason: 'not in unit tests' }),
    ),
    quota: () => quota,
    maxTabs: () => 20,
    screenshots: { release: () => {} } as unknown as ScreenshotStore,
    workspaces: join(root, 'workspaces'),
    environments,
    events: new ComputerEvents(),
    clock,
  });
  const create = (body: Partial<CreateComputerBody> = {}) =>
    registry.create('local', { kind: 'browser', ...body } as CreateComputerBody);
  return { registry, clock, browser, desktop, environments, create };
}

describe('the computer registry', () => {
  let t: ReturnType<typeof setup>;
  beforeEach(() => {
    t = setup();
  });

  it('ends an idle computer when its inactivity timeout runs out, and activity moves it later', async () => {
    const session = await t.create({ inactivity_timeout_seconds: 60 });
    t.clock.advance(59 * SECOND);
    expect(session.status).toBe('running');
    t.registry.keepalive('local', session.id);
    t.clock.advance(59 * SECOND);
    expect(session.status).toBe('running');
    t.clock.advance(1 * SECOND);
    expect(session.status).toBe('terminated');
    expect(session.terminationReason).toBe('idle_timeout');
    expect(session.terminatedAt).toBe(t.clock.now());
    await expect.poll(() => t.browser.operators[0]!.closed).toBe(true);
  });

  it('does not end a computer while something holds it; idle time starts afresh after the last hold', async () => {
    const session = await t.create({ inactivity_timeout_seconds: 60, max_lifetime_seconds: 3600 });
    expect(session.statusView().idle_held).toBe(false);
    const task = session.holdIdle();
    const approval = session.holdIdle();
    t.clock.advance(10 * 60 * SECOND);
    expect(session.status).toBe('running');
    expect(session.statusView()).toMatchObject({
      last_activity_at: new Date(t.clock.now()).toISOString(),
      idle_held: true,
    });
    approval();
    t.clock.advance(10 * 60 * SECOND);
    expect(session.status).toBe('running');
    expect(session.statusView().idle_held).toBe(true);
    task();
    task(); // a second release counts once
    expect(session.statusView().idle_held).toBe(false);
    t.clock.advance(59 * SECOND);
    expect(session.status).toBe('running');
    t.clock.advance(1 * SECOND);
    expect(session.terminationReason).toBe('idle_timeout');

    // The max lifetime still applies to a held computer.
    const held = await t.create({ max_lifetime_seconds: 300 });
    held.holdIdle();
    t.clock.advance(300 * SECOND);
    expect(held.terminationReason).toBe('max_lifetime');
  });

  it('ends a computer at its max lifetime however active it is', async () => {
    const session = await t.create({ max_lifetime_seconds: 300, inactivity_timeout_seconds: 120 });
    for (let minute = 1; minute < 5; minute++) {
      t.clock.advance(60 * SECOND);
      t.registry.keepalive('local', session.id);
    }
    t.clock.advance(59 * SECOND);
    expect(session.status).toBe('running');
    t.clock.advance(1 * SECOND);
    expect(session.status).toBe('terminated');
    expect(session.terminationReason).toBe('max_lifetime');
  });

  it('never ends a computer whose idle timeout is off and that has no max lifetime', async () => {
    const session = await t.create({ idle_timeout_enabled: false });
    t.clock.advance(7 * 24 * 3600 * SECOND);
    expect(session.status).toBe('running');
    expect(session.nextDeadline()).toBeUndefined();
  });

  it('keeps an ended computer retrievable for a while, then forgets it', async () => {
    const session = await t.create();
    await t.registry.delete('local', session.id);
    expect(t.registry.get('local', session.id).status).toBe('terminated');
    expect(() => t.registry.getRunning('local', session.id)).toThrow(/has ended \(deleted at/);
    expect(t.registry.list('local')).toEqual([]);
    t.clock.advance(KEEP_TERMINATED_MS - 1);
    expect(t.registry.get('local', session.id).terminationReason).toBe('deleted');
    t.clock.advance(1);
    expect(() => t.registry.get('local', session.id)).toThrow(`no computer ${session.id}`);
  });

  it('an ended computer no longer runs its lifetime timers', async () => {
    const session = await t.create({ inactivity_timeout_seconds: 10 });
    await t.registry.delete('local', session.id);
    t.clock.advance(20 * SECOND);
    expect(session.terminationReason).toBe('deleted');
  });

  it('closes once every computer has ended, those ending already included (a lost backend)', async () => {
    const session = await t.create();
    const operator = t.browser.operators[0]!;
    let finish = () => {};
    operator.close = () =>
      new Promise<void>((resolve) => {
        finish = () => {
          operator.closed = true;
          resolve();
        };
      });
    void t.registry.terminate(session, 'backend_lost');
    let closed = false;
    const closing = t.registry.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(operator.closed).toBe(true);
  });

  it('ends a computer whose backend was lost while it started, once it exists', async () => {
    const lost = setup(5, { crashWhileStarting: 'backend_lost' });
    const session = await lost.create();
    expect(session.status).toBe('terminated');
    expect(session.terminationReason).toBe('backend_lost');
    await expect.poll(() => lost.browser.operators[0]!.closed).toBe(true);
  });

  it('scopes computers by organization', async () => {
    const session = await t.create();
    expect(() => t.registry.get('acme', session.id)).toThrow(`no computer ${session.id}`);
    expect(t.registry.list('acme')).toEqual([]);
    expect(t.registry.list('local')).toEqual([session]);
  });

  it('refuses a computer beyond the organization quota, counting creates in flight', async () => {
    const small = setup(2);
    const [first, second] = await Promise.all([small.create(), small.create()]);
    expect(first!.status).toBe('running');
    expect(second!.status).toBe('running');
    await expect(small.create()).rejects.toMatchObject({
      code: 'concurrency_limit',
      message: expect.stringMatching(/already has 2 browser computers \(limit 2\)/),
    });
    await small.registry.delete('local', first!.id);
    await expect(small.create()).resolves.toMatchObject({ status: 'running' });
  });

  it('lets one computer at a time hold an exclusive resource, and frees it when it ends', async () => {
    const holder = await t.create({ kind: 'desktop' });
    await expect(t.create({ kind: 'desktop' })).rejects.toMatchObject({
      message: `held by ${holder.id}`,
      path: ['exclusive'],
    });
    await t.registry.delete('local', holder.id);
    await expect(t.create({ kind: 'desktop' })).resolves.toMatchObject({ status: 'running' });
  });

  it("saves a persistent computer's state before its close or after, as its driver says", async () => {
    const browser = await t.create({ persistent: true });
    const desktop = await t.create({ kind: 'desktop', persistent: true });
    await t.registry.delete('local', browser.id);
    await t.registry.delete('local', desktop.id);
    expect(t.browser.operators[0]!.calls).toEqual(['save', 'close']);
    expect(t.desktop.operators[0]!.calls).toEqual(['close', 'save']);
    expect((await t.environments.get('local', browser.id)).kind).toBe('browser');
    expect((await t.environments.get('local', desktop.id)).kind).toBe('desktop');
  });

  it('hands each driver what it needs to start: workspace, limits as they are now, no sandbox here', async () => {
    const session = await t.create();
    const [context] = t.browser.contexts;
    expect(context).toMatchObject({ id: session.id, org: 'local', sandboxed: false });
    expect(context!.workspace).toBe(session.spec.workspace);
    expect(context!.maxTabs()).toBe(20);
  });
});
