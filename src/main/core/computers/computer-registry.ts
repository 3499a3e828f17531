import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { BrowserContextOptions } from 'playwright-core';
import type { Display } from '../../../shared/common.js';
import type {
  ComputerKind,
  CreateComputerBody,
  TerminationReason,
} from '../../../shared/computers.js';
import type { Settings } from '../config.js';
import { BenchtopError, invalidRequest, notFound } from '../errors.js';
import type { ComputerEvents } from '../events/computer-events.js';
import { newId } from '../ids.js';
import type { ScreenshotStore } from '../screenshots/screenshot-store.js';
import type { EnvironmentStore } from '../store/environment-store.js';
import { makeDirectory } from '../storage-errors.js';
import { BrowserOperator, proxyFromUrl } from './browser/browser-operator.js';
import type { BrowserHost, ComputerContextOptions } from './browser/browser-host.js';
import type { TabActivity } from './browser/browser-tabs.js';
import { ComputerSession } from './computer-session.js';
import { findChromium } from './browser/find-chromium.js';
import { stealthContextOptions } from './browser/stealth.js';
import { startDesktop } from './desktop/start-desktop.js';
import { startHostDesktop } from './desktop/host-desktop.js';
import type { Operator } from './operator.js';
import type { ComputerSandbox } from '../sandbox/computer-sandbox.js';
import type { OrganizationPolicy } from '../sandbox/organization-policy.js';

/** Cookies, localStorage and IndexedDB of a browser context, as Playwright saves them. */
type StorageState = Exclude<BrowserContextOptions['storageState'], string | undefined>;

const DEFAULT_DISPLAY: Display = { width: 1280, height: 720, scale: 1 };
const DEFAULT_IDLE_SECONDS = 120;
/** Terminated computers stay retrievable this long (the contract asks for at least an hour). */
const KEEP_TERMINATED_MS = 65 * 60 * 1000;
/** Screenshot URLs outlive their computer by this much. */
const SCREENSHOT_GRACE_MS = 10 * 60 * 1000;

export type RegistryDeps = {
  settings: Settings;
  /** What an organization may create, and whether its computers run sandboxed. */
  policy: OrganizationPolicy;
  browsers: BrowserHost;
  screenshots: ScreenshotStore;
  workspaces: string;
  environments: EnvironmentStore;
  /** Where terminations, tabs and navigations are published. */
  events: ComputerEvents;
};

/** Every computer of every organization: creation, lookup scoped by org, lifetimes, termination. */
export class ComputerRegistry {
  private readonly sessions = new Map<string, ComputerSession>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The computer driving the real screen (host mode), if any. */
  private hostDisplayHolder: string | undefined;
  /** Creates in flight per org and kind. */
  private readonly creating = new Map<string, number>();

  constructor(private readonly deps: RegistryDeps) {}

  async create(org: string, body: CreateComputerBody): Promise<ComputerSession> {
    const restored = await this.restorable(org, body);
    let display = { ...DEFAULT_DISPLAY, ...body.display };
    if (body.kind === 'desktop' && display.scale !== 1) {
      throw invalidRequest(
        'desktop computers have scale 1; leave display.scale out',
        'display.scale',
      );
    }
    const contextOptions = this.contextOptions(display, body);
    const { policy } = this.deps;
    policy.checkCreate(org, body.kind, body.host_display === true);
    const sandboxed = body.host_display ? false : await policy.sandboxed(org, body.kind);
    const id = newId('comp');
    // The slot is taken before the first await, so simultaneous creates cannot pass the limit.
    const release = this.reserve(org, body.kind);
    try {
      if (body.host_display) this.claimHostDisplay(id, body.kind);
    } catch (error) {
      release();
      throw error;
    }
    const workspace = join(this.deps.workspaces, id);
    try {
      await makeDirectory(workspace);
      if (restored?.kind === 'desktop') {
        await this.deps.environments.restoreWorkspace(org, restored.id, workspace);
      }
      // A crash can only end a computer that exists; one during start fails the create instead.
      const created: { session?: ComputerSession } = {};
      const onCrash = () => void (created.session && this.terminate(created.session, 'crashed'));
      const browser = findChromium(this.deps.settings.browser.executable_path);
      const report = (activity: TabActivity) => this.deps.events.publish(id, activity);
      const maxTabs = this.deps.settings.limits.max_tabs;
      let started: { operator: Operator; env: Record<string, string>; sandbox?: ComputerSandbox };
      if (body.host_display) {
        const host = await startHostDesktop({ workspace, browser, maxTabs, report, onCrash });
        display = { width: host.width, height: host.height, scale: 1 };
        started = host;
      } else if (body.kind === 'desktop') {
        started = await startDesktop({
          ...display,
          workspace,
          privateDir: policy.privateDir(id),
          sandboxed,
          network: policy.network(org),
          terminal: policy.mayExec(org),
          browser,
          maxTabs,
          report,
          onCrash,
        });
      } else {
        const storageState = restored?.storageState;
        const operator = await this.startBrowser(contextOptions, onCrash, report, storageState);
        started = { operator, env: {} };
      }
      const { operator, env, sandbox } = started;
      const session = new ComputerSession(
        {
          id,
          org,
          kind: body.kind,
          display,
          persistent: body.persistent ?? false,
          environmentId: body.environment_id ?? null,
          contextId: body.context_id ?? null,
          workspace,
          env,
          sandboxed,
          maxLifetimeSeconds: body.max_lifetime_seconds ?? body.timeout_seconds ?? null,
          inactivityTimeoutSeconds: body.inactivity_timeout_seconds ?? DEFAULT_IDLE_SECONDS,
          idleTimeoutEnabled: body.idle_timeout_enabled ?? body.auto_kill ?? true,
        },
        operator,
      );
      session.sandbox = sandbox;
      created.session = session;
      this.sessions.set(id, session);
      this.arm(session);
      return session;
    } catch (error) {
      if (this.hostDisplayHolder === id) this.hostDisplayHolder = undefined;
      await rm(workspace, { recursive: true, force: true });
      await rm(policy.privateDir(id), { recursive: true, force: true });
      throw error;
    } finally {
      release();
    }
  }

  /**
   * After a settings change: a desktop whose organization may no longer run commands loses its
   * terminal, so nothing typed into it runs anything. (Switched back on, desktops started from
   * then on get one.)
   */
  settingsChanged(): void {
    for (const session of this.sessions.values()) {
      if (session.status === 'running' && !this.deps.policy.mayExec(session.org))
        session.operator.endTerminal?.();
    }
  }

  /** Host mode: off unless the settings allow it, and one computer at a time. */
  private claimHostDisplay(id: string, kind: 'browser' | 'desktop'): void {
    if (kind !== 'desktop') {
      throw invalidRequest(
        'host_display is for desktop computers (kind: "desktop")',
        'host_display',
      );
    }
    if (!this.deps.settings.desktop.host_mode) {
      throw invalidRequest(
        "host mode is off: a computer may drive this machine's real screen only with desktop.host_mode set to true in settings",
        'host_display',
      );
    }
    if (this.hostDisplayHolder) {
      throw invalidRequest(
        `the host display is already driven by ${this.hostDisplayHolder}; delete it first`,
        'host_display',
      );
    }
    this.hostDisplayHolder = id;
  }

  /** The saved environment a create restores, checked before anything starts. */
  private async restorable(
    org: string,
    body: CreateComputerBody,
  ): Promise<{ id: string; kind: ComputerKind; storageState?: StorageState } | undefined> {
    const id = body.environment_id;
    if (id === undefined) return undefined;
    const meta = await this.deps.environments.get(org, id);
    if (meta.kind !== body.kind) {
      throw invalidRequest(
        `environment ${id} was saved from a ${meta.kind} computer; create it with kind "${meta.kind}"`,
        'environment_id',
      );
    }
    if (meta.kind === 'desktop') return { id, kind: meta.kind };
    const storageState = (await this.deps.environments.storageState(org, id)) as StorageState;
    return { id, kind: meta.kind, storageState };
  }

  private async startBrowser(
    contextOptions: BrowserContextOptions,
    onCrash: () => void,
    report: (activity: TabActivity) => void,
    storageState?: StorageState,
  ): Promise<BrowserOperator> {
    // A restored context carries its state from the start, so it never comes from the warm pool.
    const fresh = storageState
      ? await this.deps.browsers.newContext({ ...contextOptions, storageState })
      : await this.deps.browsers.acquire(contextOptions);
    return new BrowserOperator(fresh, {
      host: this.deps.browsers,
      contextOptions,
      maxTabs: this.deps.settings.limits.max_tabs,
      onCrash,
      report,
    });
  }

  private contextOptions(display: Display, body: CreateComputerBody): ComputerContextOptions {
    const options: ComputerContextOptions = {
      viewport: { width: display.width, height: display.height },
      deviceScaleFactor: display.scale,
    };
    if (body.stealth) {
      if (body.kind === 'desktop') {
        throw invalidRequest('stealth is for browser computers (kind: "browser")', 'stealth');
      }
      Object.assign(options, stealthContextOptions(body.stealth));
    }
    if (body.use_advanced_proxy) {
      const proxyUrl = this.deps.settings.proxy.advanced_proxy_url;
      if (!proxyUrl) {
        throw invalidRequest(
          'use_advanced_proxy needs a proxy in settings (proxy.advanced_proxy_url)',
          'use_advanced_proxy',
        );
      }
      // The URL holds credentials: a parse error names the setting, never the value.
      try {
        options.proxy = proxyFromUrl(proxyUrl);
      } catch {
        throw invalidRequest(
          'use_advanced_proxy: proxy.advanced_proxy_url in settings is not a valid URL',
          'use_advanced_proxy',
        );
      }
    }
    return options;
  }

  /** Counts a computer being created against the org's limit until it is registered. */
  private reserve(org: string, kind: 'browser' | 'desktop'): () => void {
    const { limits } = this.deps.settings;
    const limit = kind === 'browser' ? limits.browsers_per_org : limits.desktops_per_org;
    const slot = `${org}\u0000${kind}`;
    const pending = this.creating.get(slot) ?? 0;
    const running = this.list(org).filter((session) => session.init.kind === kind).length;
    if (running + pending >= limit) {
      throw new BenchtopError(
        'concurrency_limit',
        `organization ${org} already has ${running + pending} ${kind} computers (limit ${limit}); delete one first`,
        { retryAfterSeconds: 1 },
      );
    }
    this.creating.set(slot, pending + 1);
    return () => this.creating.set(slot, (this.creating.get(slot) ?? 1) - 1);
  }

  /** The computer if it belongs to org, running or recently terminated. */
  get(org: string, id: string): ComputerSession {
    const session = this.sessions.get(id);
    if (!session || session.org !== org) throw notFound(`no computer ${id}`, 'id');
    return session;
  }

  /** Like get(), but a terminated computer is a 404 that says why it ended. */
  getRunning(org: string, id: string): ComputerSession {
    const session = this.get(org, id);
    if (session.status !== 'running') {
      throw notFound(
        `computer ${id} has ended (${session.terminationReason} at ${new Date(session.terminatedAt!).toISOString()})`,
        'id',
      );
    }
    return session;
  }

  list(org: string): ComputerSession[] {
    return [...this.sessions.values()].filter(
      (session) => session.org === org && session.status === 'running',
    );
  }

  async delete(org: string, id: string): Promise<void> {
    await this.terminate(this.get(org, id), 'deleted');
  }

  keepalive(org: string, id: string): ComputerSession {
    const session = this.getRunning(org, id);
    session.touch();
    return session;
  }

  /** Checks lifetimes exactly at the next deadline; activity only moves the deadline later. */
  private arm(session: ComputerSession): void {
    clearTimeout(this.timers.get(session.id));
    const deadline = session.nextDeadline();
    if (!deadline || session.status !== 'running') return;
    const timer = setTimeout(
      () => {
        const due = session.nextDeadline();
        if (due && due.at <= Date.now()) void this.terminate(session, due.reason);
        else this.arm(session);
      },
      Math.max(0, deadline.at - Date.now()),
    );
    timer.unref();
    this.timers.set(session.id, timer);
  }

  async terminate(session: ComputerSession, reason: TerminationReason): Promise<void> {
    if (session.status === 'terminated') return;
    session.status = 'terminated';
    session.terminatedAt = Date.now();
    session.terminationReason = reason;
    this.deps.events.publish(session.id, {
      type: 'status',
      status: 'terminated',
      termination_reason: reason,
    });
    session.ended.abort();
    if (this.hostDisplayHolder === session.id) this.hostDisplayHolder = undefined;
    clearTimeout(this.timers.get(session.id));
    const forget = setTimeout(() => {
      this.sessions.delete(session.id);
      this.timers.delete(session.id);
    }, KEEP_TERMINATED_MS);
    forget.unref();
    this.timers.set(session.id, forget);
    this.deps.screenshots.release(session.id, reason === 'shutdown' ? 0 : SCREENSHOT_GRACE_MS);
    // A browser's state is read from its live context, so it is saved before the close. A
    // desktop's programs (its Chromium above all) write theirs to the workspace as they exit, so
    // it is saved after. A failed save still frees the computer.
    const savedAfterClose = session.init.kind === 'desktop';
    if (savedAfterClose) await session.operator.close();
    const failed = await this.save(session).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    if (!savedAfterClose) await session.operator.close();
    // A workspace the disk will not let go of (read-only, permissions) only takes space; the
    // computer has ended either way, and a failed save is the error worth reporting.
    await rm(session.init.workspace, { recursive: true, force: true }).catch(() => {});
    await rm(this.deps.policy.privateDir(session.id), { recursive: true, force: true }).catch(
      () => {},
    );
    if (failed && reason === 'deleted') throw failed;
  }

  /** A persistent computer's state, as its environment (the one it came from, else its own id). */
  private async save(session: ComputerSession): Promise<void> {
    const { persistent, environmentId, org, id, kind, workspace } = session.init;
    if (!persistent) return;
    const target = environmentId ?? id;
    if (kind === 'desktop') {
      await this.deps.environments.save(org, target, id, { kind, workspace });
    } else if (session.operator instanceof BrowserOperator) {
      const storageState = await session.operator.storageState();
      await this.deps.environments.save(org, target, id, { kind, storageState });
    }
  }

  async close(): Promise<void> {
    const running = [...this.sessions.values()].filter((session) => session.status === 'running');
    await Promise.all(running.map((session) => this.terminate(session, 'shutdown')));
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}
