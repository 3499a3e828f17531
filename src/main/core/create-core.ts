import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { TaskService } from './agent/task-service.js';
import { ActionRunner } from './actions/action-runner.js';
import { AuthFailures } from './guards/auth-failures.js';
import { IpBlockFiles } from './guards/ip-block-files.js';
import { TokenBuckets } from './guards/token-buckets.js';
import { BrowserHost } from './computers/browser/browser-host.js';
import { ComputerRegistry } from './computers/computer-registry.js';
import { ComputerService } from './facades/computer-service.js';
import { BrowserDriver } from './computers/drivers/browser-driver.js';
import { BackendPool } from './computers/backends/backend-pool.js';
import { DesktopDriver } from './computers/drivers/desktop-driver.js';
import type { ComputerDriver } from './computers/drivers/driver.js';
import { HostDriver } from './computers/drivers/host-driver.js';
import { ComputerEvents } from './events/computer-events.js';
import { ShellService } from './shell/shell-service.js';
import { hostEnv, OrganizationPolicy } from './sandbox/organization-policy.js';
import type { ComputerKind } from '../../shared/computers.js';
import { isTerminalEvent } from '../../shared/tasks.js';
import type { Settings } from './config.js';
import { SettingsService } from './settings-service.js';
import { SettingsSource } from './runtime/settings-source.js';
import { ScreenshotStore } from './screenshots/screenshot-store.js';
import { ScreencastHub } from './screencast/screencast-hub.js';
import { ChatService } from './models/chat-service.js';
import { ImageResolver } from './models/image-resolver.js';
import { ModelRegistry } from './models/model-registry.js';
import { ResponsesService } from './models/responses-service.js';
import { openDatabase } from './store/database.js';
import { EnvironmentStore } from './store/environment-store.js';
import { ResponseStore } from './store/response-store.js';
import { UsageLedger } from './store/usage-ledger.js';
import { TaskStore } from './store/task-store.js';
import { KeyStore } from './store/key-store.js';
import { OrgStorage } from './store/org-storage.js';
import { preparePrivateDataDir } from './store/private-files.js';
import type { WorkerEntry } from './computers/desktop/worker-client.js';
import { Recorder } from './recordings/recorder.js';
import { ApprovalService } from './approvals/approval-service.js';
import { ApprovalStore } from './approvals/approval-store.js';
import { AttentionService } from './attention/attention-service.js';
import { AttentionDismissals } from './attention/dismissals.js';
import { Webhook } from './attention/webhook.js';
import { RecordingStore } from './recordings/recording-store.js';
import { proxyPassword, SecretScrubber } from './recordings/secret-scrubber.js';
import { keyFileCipher, type SecretCipher } from './secrets/secret-cipher.js';
import { SecretVault } from './secrets/secret-vault.js';

export type CoreOptions = {
  settings: Settings;
  dataDir: string;
  /** A key accepted for organization `local` without being stored (BENCHTOP_API_KEY). */
  trustedKey?: string;
  /** Watch keys.json so keys revoked by another process stop working at once. */
  watchKeys?: boolean;
  /** Settings from BENCHTOP_CONFIG, BENCHTOP_* variables and flags: they stay above config.json. */
  overrides?: Record<string, unknown>;
  /** The desktop worker's module (the desktop drivers fork it), resolved where the app is composed. */
  workerEntry: WorkerEntry;
  /** Where core reports what went wrong in the background (a video that could not be encoded). */
  log?: (message: string) => void;
  /** How the vault seals secrets: the OS keychain in the app; else a key file in the data dir. */
  secretCipher?: SecretCipher;
};

export type Core = Awaited<ReturnType<typeof createCore>>;

/** Builds everything from settings. Plain Node: no Electron, no Express. */
export async function createCore(options: CoreOptions) {
  const { dataDir } = options;
  const log = options.log ?? (() => {});
  // Frozen snapshots: a settings change replaces the snapshot, and everything below reads the
  // current one where it uses a value (never a section kept from start).
  const source = new SettingsSource(options.settings);
  const settings = () => source.current();
  preparePrivateDataDir(dataDir);
  const server = settings().server;
  let baseUrl = `http://${server.host}:${server.port}`;
  const keys = new KeyStore(dataDir, { watch: options.watchKeys });
  if (options.trustedKey) keys.trustKey(options.trustedKey, 'local');
  const screenshots = new ScreenshotStore(
    join(dataDir, 'screenshots'),
    () => settings().limits.screenshots_per_computer,
  );
  await screenshots.init();
  const environments = new EnvironmentStore(join(dataDir, 'environments'));
  await environments.init();
  // Its launch options and warm pool are restart keys: the snapshot at start is theirs for good.
  // Tracing of recorded browsers writes under traces/ as it goes: a killed run's traces are
  // completed from there at the next start.
  const browsers = new BrowserHost(settings().browser, {
    tracesDir: join(dataDir, 'traces'),
    prepareNetwork: () => settings().recording.enabled,
    log,
  });
  const events = new ComputerEvents();
  const policy = new OrganizationPolicy(settings, join(dataDir, 'computers'));
  await policy.init();
  const database = openDatabase(join(dataDir, 'benchtop.sqlite'));
  const models = new ModelRegistry(() => settings().models, process.env, log);
  const screencasts = new ScreencastHub();
  const vault = new SecretVault(database, options.secretCipher ?? keyFileCipher(dataDir));
  // Secrets are read at each use: a key set in settings a moment ago is scrubbed too.
  // The registry is made further down (it needs the recorder), and the recorder scrubs what an
  // earlier run left before that: until the registry exists, no computer has a CDP token.
  let cdpTokens = (): string[] => [];
  const scrubber = new SecretScrubber(
    (): string[] =>
      [
        ...models.keys(),
        proxyPassword(settings().proxy.advanced_proxy_url),
        options.trustedKey,
        ...cdpTokens(),
      ].filter((secret): secret is string => secret !== undefined),
    () => vault.allValues(),
  );
  const recorder = new Recorder({
    root: join(dataDir, 'recordings'),
    store: new RecordingStore(database),
    screencasts,
    scrubber,
    settings: () => settings().recording,
    log: options.log,
  });
  await recorder.init();
  const approvals = new ApprovalService({
    store: new ApprovalStore(database),
    events,
    screenshots,
    baseUrl: () => baseUrl,
    settings,
  });
  approvals.init();
  events.setTap((event) => {
    recorder.tap(event);
    if (event.type === 'status') approvals.computerEnded(event.computer_id);
  });
  screenshots.onSaved = (computerId, file) => void recorder.screenshotSaved(computerId, file);
  const { workerEntry } = options;
  const host = new HostDriver({ environments, settings, workerEntry });
  // Where browser computers run; follows browser.backends as settings change (below).
  const backends = new BackendPool(settings().browser.backends, {
    headless: settings().browser.headless,
    tracesDir: browsers.tracesDir,
  });
  const desktops = new DesktopDriver({ environments, settings, host, workerEntry, policy });
  const drivers = new Map<ComputerKind, ComputerDriver>([
    ['browser', new BrowserDriver({ browsers, backends, environments, settings })],
    ['desktop', desktops],
  ]);
  const registry = new ComputerRegistry({
    drivers,
    policy,
    quota: (kind) =>
      kind === 'browser' ? settings().limits.browsers_per_org : settings().limits.desktops_per_org,
    maxTabs: () => settings().limits.max_tabs,
    screenshots,
    workspaces: join(dataDir, 'workspaces'),
    environments,
    events,
    recorder,
  });
  cdpTokens = () => registry.cdpTokens();
  const shell = new ShellService({ events, policy, hostEnv: () => hostEnv(settings()) });
  const actions = new ActionRunner({
    screenshots,
    baseUrl: () => baseUrl,
    shell,
    events,
    gate: approvals,
    secrets: vault,
  });
  const computers = new ComputerService({
    registry,
    actions,
    shell,
    baseUrl: () => baseUrl,
    gate: approvals,
    recordedDownloads: (org, id) => recorder.downloadsOf(org, id),
  });
  const storage = new OrgStorage(database, () => settings().limits);
  // Read through getters: each image request sees the limits and hosts as they are now.
  const imageSettings = {
    get server() {
      return settings().server;
    },
    get limits() {
      return settings().limits;
    },
  };
  const ledger = new UsageLedger(database);
  const responses = new ResponsesService(
    new ResponseStore(database, storage),
    models,
    new ImageResolver(screenshots, () => baseUrl, imageSettings),
    ledger,
  );
  const chat = new ChatService(models);
  // What waits for a person: pending approvals and the tasks that stopped for one.
  const attention = new AttentionService({
    approvals,
    tasks: {
      get: (org, id) => tasks.get(org, id),
      list: (org, filter) => tasks.list(org, filter),
      lastEvent: (org, id, types) => tasks.lastEvent(org, id, types),
    },
    dismissals: new AttentionDismissals(database),
  });
  const tasks = new TaskService({
    store: new TaskStore(database, storage),
    responses,
    actions,
    events,
    screenshots,
    computers: registry,
    models,
    recorder,
    settings,
    ledger,
    observe: (computerId, listener) => approvals.observe(computerId, listener),
    onEvent: (org, computerId, event) => {
      if (isTerminalEvent(event.type) && event.task_id)
        approvals.taskEnded(event.task_id, event.type);
      attention.taskEvent(org, computerId, event);
    },
  });
  approvals.onAsked((org, approval) => attention.approvalAsked(org, approval));
  const webhook = new Webhook(() => settings().notifications, log);
  attention.subscribe((org, item) => webhook.send(org, item));
  // Read on every request, so a settings change applies at once.
  const guards = {
    failures: new AuthFailures(() => settings().limits.auth_failures_before_block),
    buckets: new TokenBuckets(() => ({
      rate: settings().limits.requests_per_second,
      burst: settings().limits.burst,
    })),
  };
  const settingsService = new SettingsService({
    source,
    dataDir,
    overrides: options.overrides,
  });
  source.subscribe(() => registry.settingsChanged());
  source.subscribe((next, previous) => {
    if (isDeepStrictEqual(next.browser.backends, previous.browser.backends)) return;
    const hadLocal = backends.hasLocal;
    backends.apply(next.browser.backends);
    if (!hadLocal && backends.hasLocal) browsers.prewarm();
  });
  const blockFiles = new IpBlockFiles(dataDir, guards.failures);
  if (backends.hasLocal) browsers.prewarm();
  desktops.prewarm();

  return {
    /** The settings as they are now: a frozen snapshot (change them through settingsService). */
    get settings() {
      return source.current();
    },
    /** The snapshots themselves (tests replace one to try a limit that flags would override). */
    settingsSource: source,
    keys,
    computers,
    environments,
    screencasts,
    screenshots,
    browsers,
    backends,
    desktops,
    events,
    recorder,
    scrubber,
    vault,
    models,
    responses,
    chat,
    ledger,
    tasks,
    approvals,
    attention,
    webhook,
    guards,
    settingsService,
    get baseUrl() {
      return baseUrl;
    },
    /** The server tells core where it listens, for absolute URLs in results. */
    setBaseUrl(url: string) {
      baseUrl = url.replace(/\/$/, '');
    },
    /** Ends everything; `onStep` hears each part's name as its close begins. */
    async close(onStep?: (part: string) => void) {
      // Every step runs even when one before it fails (a disk that refuses a write, a browser
      // already gone): a shutdown that stopped halfway would leave Chromium or desktops running.
      // A step may say what in it is closing (`say`), for a close that hangs to name it.
      const steps: Array<[string, (say: (part: string) => void) => unknown]> = [
        ['tasks', () => tasks.close()],
        ['approvals', () => approvals.close()],
        ['the approval webhook', () => webhook.drain()],
        ['block files', () => blockFiles.close()],
        ['screencasts', () => screencasts.close()],
        ['computers', () => registry.close()],
        ['recordings', () => recorder.close()],
        ['remote backends', () => backends.close()],
        ['browsers', (say) => browsers.close((part) => say(`browsers: ${part}`))],
        ['desktops', () => desktops.close()],
        ['responses', () => responses.close()],
        ['screenshots', () => screenshots.close()],
        ['keys', () => keys.close()],
        ['storage', () => storage.close()],
        ['the database', () => database.close()],
      ];
      const failures: Error[] = [];
      for (const [part, step] of steps) {
        onStep?.(part);
        try {
          await step((inner) => onStep?.(inner));
        } catch (error) {
          failures.push(error as Error);
        }
      }
      if (failures.length) throw failures[0]!;
    },
  };
}
