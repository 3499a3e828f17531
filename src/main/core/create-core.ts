import { join } from 'node:path';
import { TaskService } from './agent/task-service.js';
import { ActionRunner } from './computers/action-runner.js';
import { AuthFailures } from './guards/auth-failures.js';
import { IpBlockFiles } from './guards/ip-block-files.js';
import { TokenBuckets } from './guards/token-buckets.js';
import { BrowserHost } from './computers/browser/browser-host.js';
import { ComputerRegistry } from './computers/computer-registry.js';
import { ComputerEvents } from './events/computer-events.js';
import { ShellService } from './shell/shell-service.js';
import { hostEnv, OrganizationPolicy } from './sandbox/organization-policy.js';
import type { Settings } from './config.js';
import { SettingsService } from './settings-service.js';
import { ScreenshotStore } from './screenshots/screenshot-store.js';
import { ScreencastHub } from './screencast/screencast-hub.js';
import { ChatService } from './models/chat-service.js';
import { ImageResolver } from './models/image-resolver.js';
import { ModelRegistry } from './models/model-registry.js';
import { ResponsesService } from './models/responses-service.js';
import { openDatabase } from './store/database.js';
import { EnvironmentStore } from './store/environment-store.js';
import { ResponseStore } from './store/response-store.js';
import { TaskStore } from './store/task-store.js';
import { KeyStore } from './store/key-store.js';
import { OrgStorage } from './store/org-storage.js';
import { preparePrivateDataDir } from './store/private-files.js';

export type CoreOptions = {
  settings: Settings;
  dataDir: string;
  /** A key accepted for organization `local` without being stored (BENCHTOP_API_KEY). */
  trustedKey?: string;
  /** Watch keys.json so keys revoked by another process stop working at once. */
  watchKeys?: boolean;
  /** Settings from BENCHTOP_CONFIG, BENCHTOP_* variables and flags: they stay above config.json. */
  overrides?: Record<string, unknown>;
};

export type Core = Awaited<ReturnType<typeof createCore>>;

/** Builds everything from settings. Plain Node: no Electron, no Express. */
export async function createCore(options: CoreOptions) {
  const { settings, dataDir } = options;
  preparePrivateDataDir(dataDir);
  const keys = new KeyStore(dataDir, { watch: options.watchKeys });
  if (options.trustedKey) keys.trustKey(options.trustedKey, 'local');
  const screenshots = new ScreenshotStore(
    join(dataDir, 'screenshots'),
    () => settings.limits.screenshots_per_computer,
  );
  await screenshots.init();
  const environments = new EnvironmentStore(join(dataDir, 'environments'));
  await environments.init();
  const browsers = new BrowserHost(settings.browser);
  const events = new ComputerEvents();
  const policy = new OrganizationPolicy(settings, join(dataDir, 'computers'));
  await policy.init();
  const computers = new ComputerRegistry({
    policy,
    settings,
    browsers,
    screenshots,
    workspaces: join(dataDir, 'workspaces'),
    environments,
    events,
  });
  let baseUrl = `http://${settings.server.host}:${settings.server.port}`;
  const shell = new ShellService({ events, policy, hostEnv: () => hostEnv(settings) });
  const actions = new ActionRunner({
    screenshots,
    baseUrl: () => baseUrl,
    shell,
    events,
  });
  const database = openDatabase(join(dataDir, 'benchtop.sqlite'));
  const storage = new OrgStorage(database, () => settings.limits);
  const models = new ModelRegistry(settings.models);
  const responses = new ResponsesService(
    new ResponseStore(database, storage),
    models,
    new ImageResolver(screenshots, () => baseUrl, settings),
  );
  const chat = new ChatService(models);
  const tasks = new TaskService({
    store: new TaskStore(database, storage),
    responses,
    actions,
    events,
    screenshots,
    computers,
    models,
  });
  // Read on every request, so a settings change applies at once.
  const guards = {
    failures: new AuthFailures(() => settings.limits.auth_failures_before_block),
    buckets: new TokenBuckets(() => ({
      rate: settings.limits.requests_per_second,
      burst: settings.limits.burst,
    })),
  };
  const settingsService = new SettingsService({
    current: settings,
    dataDir,
    overrides: options.overrides,
    onApplied: () => computers.settingsChanged(),
  });
  const blockFiles = new IpBlockFiles(dataDir, guards.failures);
  browsers.prewarm();

  const screencasts = new ScreencastHub();

  return {
    settings,
    dataDir,
    keys,
    computers,
    environments,
    screencasts,
    actions,
    screenshots,
    browsers,
    events,
    shell,
    models,
    responses,
    chat,
    tasks,
    guards,
    settingsService,
    get baseUrl() {
      return baseUrl;
    },
    /** The server tells core where it listens, for absolute URLs in results. */
    setBaseUrl(url: string) {
      baseUrl = url.replace(/\/$/, '');
    },
    async close() {
      // Every step runs even when one before it fails (a disk that refuses a write, a browser
      // already gone): a shutdown that stopped halfway would leave Chromium or desktops running.
      const steps: Array<() => unknown> = [
        () => tasks.close(),
        () => blockFiles.close(),
        () => screencasts.close(),
        () => computers.close(),
        () => browsers.close(),
        () => responses.close(),
        () => screenshots.close(),
        () => keys.close(),
        () => storage.close(),
        () => database.close(),
      ];
      const failures: Error[] = [];
      for (const step of steps) {
        try {
          await step();
        } catch (error) {
          failures.push(error as Error);
        }
      }
      if (failures.length) throw failures[0]!;
    },
  };
}
