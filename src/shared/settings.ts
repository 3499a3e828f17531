import { z } from 'zod';
import { PolicyList } from './approvals.js';

export const PROVIDER_KINDS = [
  'scripted',
  'openai',
  'anthropic',
  'lightcone',
  'openai-compatible',
] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** What a secret reads in every answer: a set provider `api_key`; sent back, it keeps the key. */
export const MASKED_SECRET = '********';

/** A strict object whose unknown keys are named with their full setting path. */
function section<T extends z.core.$ZodLooseShape>(name: string, shape: T) {
  const known = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown setting ${issue.keys.map((key) => `${name}.${key}`).join(', ')}; ${name} has ${known}`
        : undefined,
  });
}

/** US dollars per million tokens of one model: the ledger's cost_usd and tasks' budgets. */
export const ProviderPrice = z.strictObject(
  {
    input_per_mtok: z.number().min(0),
    output_per_mtok: z.number().min(0),
    /** Input tokens the provider served from its cache; the input price when not given. */
    cached_input_per_mtok: z.number().min(0).optional(),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `${issue.keys.join(', ')} is not a field of a price (known: input_per_mtok, output_per_mtok, cached_input_per_mtok)`
        : undefined,
  },
);
export type ProviderPrice = z.infer<typeof ProviderPrice>;

/**
 * A model that has not answered in 55 s fails the response. The SDKs' 60 s no longer binds it (a
 * slow response is kept alive), but a hung provider should not hold a task for minutes.
 */
export const DEFAULT_MODEL_TIMEOUT_MS = 55_000;

/** As the official OpenAI and Anthropic SDKs: a rate limit or an overload is tried twice more. */
export const DEFAULT_MODEL_RETRIES = 2;

const modelFields = {
  provider: z.enum(PROVIDER_KINDS),
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key_env: z.string().min(1).optional(),
  api_key: z.string().min(1).optional(),
  /** The upstream model name, when it differs from the Benchtop model name. */
  model: z.string().min(1).optional(),
  script: z.string().min(1).optional(),
  timeout_ms: z.number().int().positive().optional(),
  /** Tries again after a rate limit, an overload or a dropped connection; 0 never does. */
  max_retries: z.number().int().min(0).max(10).optional(),
  price: ProviderPrice.optional(),
};

/** One model name's backend. Keys come from `api_key` (set by the window) or `api_key_env`. */
export const ModelConfig = z.strictObject(modelFields, {
  error: (issue) =>
    issue.code === 'unrecognized_keys'
      ? `${issue.keys.join(', ')} is not a field of a model provider (known: ${Object.keys(modelFields).join(', ')})`
      : undefined,
});
export type ModelConfig = z.infer<typeof ModelConfig>;

const ServerSettings = section('server', {
  host: z.string().min(1).default('127.0.0.1'),
  port: z.number().int().min(0).max(65_535).default(4422),
  allowed_hosts: z.array(z.string()).default(['localhost', '127.0.0.1']),
  cors_origins: z.array(z.string()).default([]),
});
export const BACKEND_TYPES = ['local', 'playwright', 'selenium'] as const;
export type BackendType = (typeof BACKEND_TYPES)[number];

const backendFields = {
  /** How GET /backends and the Computer object name it. */
  name: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'a name is 1 to 63 letters, digits, . _ or -'),
  type: z.enum(BACKEND_TYPES),
  /** playwright: the server's ws:// endpoint; selenium: the hub's http:// address; local: none. */
  url: z.string().optional(),
  /** Browser computers it may run at once. */
  max_computers: z.number().int().min(1).max(10_000).default(20),
  /**
   * playwright only: the Chromium on the server's machine to launch (the server must run with
   * --unsafe to accept it); unset, the server launches its own installed Chromium.
   */
  executable_path: z.string().min(1).optional(),
};
export const BrowserBackendSettings = z
  .strictObject(backendFields, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `${issue.keys.join(', ')} is not a field of a browser backend (known: ${Object.keys(backendFields).join(', ')})`
        : undefined,
  })
  .superRefine(checkBackendUrl);
export type BrowserBackendSettings = z.infer<typeof BrowserBackendSettings>;

const URL_SCHEMES: Record<BackendType, RegExp | undefined> = {
  local: undefined,
  playwright: /^wss?:$/,
  selenium: /^https?:$/,
};

/** A remote backend needs a URL of its protocol; the local one has none. */
function checkBackendUrl(backend: { type: BackendType; url?: string }, ctx: z.core.$RefinementCtx) {
  const scheme = URL_SCHEMES[backend.type];
  const problem = (message: string) => ctx.addIssue({ code: 'custom', path: ['url'], message });
  if (!scheme) {
    if (backend.url !== undefined) problem('a local backend has no url');
    return;
  }
  const example =
    backend.type === 'playwright' ? 'ws://host:port/ (playwright run-server)' : 'http://hub:4444';
  let parsed: URL | undefined;
  try {
    parsed = backend.url === undefined ? undefined : new URL(backend.url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || !scheme.test(parsed.protocol)) {
    problem(`a ${backend.type} backend needs a url like ${example}`);
  }
}

/** Names are unique, and there is at most one local backend (this machine's Chromium). */
function checkBackends(backends: BrowserBackendSettings[], ctx: z.core.$RefinementCtx) {
  const seen = new Set<string>();
  for (const [index, backend] of backends.entries()) {
    if (seen.has(backend.name)) {
      ctx.addIssue({
        code: 'custom',
        path: [index, 'name'],
        message: `backend name "${backend.name}" is used twice; each backend needs its own name`,
      });
    }
    seen.add(backend.name);
  }
  if (backends.filter((backend) => backend.type === 'local').length > 1) {
    ctx.addIssue({ code: 'custom', message: 'at most one backend may be of type "local"' });
  }
}

const DEFAULT_BACKENDS: BrowserBackendSettings[] = [
  { name: 'local', type: 'local', max_computers: 20 },
];

const BrowserSettings = section('browser', {
  executable_path: z.string().nullable().default(null),
  headless: z.boolean().default(true),
  warm_pool: z.number().int().min(0).max(20).default(2),
  /**
   * Where browser computers run (docs/API.md §17): this machine's Chromium and remote engines
   * (Playwright servers, Selenium Grid 4 hubs). A new computer goes to the one with the most
   * free capacity.
   */
  backends: z
    .array(BrowserBackendSettings)
    .min(1, 'list at least one backend (the default is [{"name": "local", "type": "local"}])')
    .max(100)
    .superRefine(checkBackends)
    .default(DEFAULT_BACKENDS),
});
const DesktopSettings = section('desktop', {
  host_mode: z.boolean().default(false),
  /** Desktops started ahead, so a create takes one ready (0 turns it off). */
  warm_pool: z.number().int().min(0).max(4).default(1),
});
const ExecSettings = section('exec', {
  enabled: z.boolean().default(true),
  /**
   * The owner's commands and desktops run in the same sandbox as other organizations' (where one
   * can be made); false runs them on the host as the Benchtop user.
   */
  sandbox_owner: z.boolean().default(true),
});
/** What an organization other than the owner's (`local`) may do; everything is off by default. */
const OrganizationSettings = z.strictObject(
  {
    exec: z.boolean().default(false),
    desktops: z.boolean().default(false),
    /**
     * Its sandboxes share the machine's network (the internet, and services on loopback); false
     * gives them a network namespace of their own with nothing in it.
     */
    network: z.boolean().default(true),
  },
  {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? `unknown setting ${issue.keys.join(', ')} of an organization; an organization has exec, desktops, network`
        : undefined,
  },
);
/** The owner's organization is not configured here: exec.* governs it. */
function notTheOwner(value: Record<string, unknown>, ctx: z.core.$RefinementCtx): void {
  if ('local' in value) {
    ctx.addIssue({
      code: 'custom',
      path: ['local'],
      message:
        'organizations.local cannot be set: the owner (local) is governed by exec.enabled and exec.sandbox_owner',
    });
  }
}
const OrganizationsSettings = z
  .record(z.string(), OrganizationSettings)
  .superRefine(notTheOwner)
  .describe(
    "Per organization other than the owner: `exec` allows shell commands (exec, exec/sync, debug, and a desktop terminal), `desktops` allows desktop computers; both run in a sandbox, which shares the machine's network unless `network` is false.",
  );
const LimitSettings = section('limits', {
  requests_per_second: z.number().positive().default(100),
  burst: z.number().int().positive().default(200),
  browsers_per_org: z.number().int().min(0).default(10),
  desktops_per_org: z.number().int().min(0).default(2),
  auth_failures_before_block: z.number().int().positive().default(10),
  max_tabs: z.number().int().min(1).max(500).default(20),
  /** Bytes of responses, tasks and task events one organization may keep stored. */
  stored_bytes_per_org: z
    .number()
    .int()
    .positive()
    .default(1024 ** 3),
  /** Bytes one request may store (a response's input, a task's instruction); below the body cap. */
  max_input_bytes: z
    .number()
    .int()
    .positive()
    .default(8 * 1024 ** 2),
  /** Days after which responses and finished tasks of every organization are deleted. */
  retention_days: z.number().positive().default(30),
  /** Keys an organization may have that are not revoked (POST /keys); the CLI is not held to it. */
  keys_per_org: z.number().int().min(1).default(20),
  /** Keys an organization may create per minute with POST /keys. */
  key_creations_per_minute: z.number().int().min(1).default(10),
  /** Newest screenshots kept per computer; older ones are deleted (their URLs answer 404). */
  screenshots_per_computer: z.number().int().min(1).default(200),
  /** Images one Responses request may send (all are held in memory until its model call). */
  images_per_request: z.number().int().min(1).default(50),
  /** Bytes the images of one Responses request may add up to, fetched or inline. */
  image_bytes_per_request: z
    .number()
    .int()
    .min(1)
    .default(64 * 1024 ** 2),
  /** Seconds an image URL has to send the whole image before the request is a 400. */
  image_fetch_timeout_seconds: z.number().positive().max(600).default(10),
});
const ProxySettings = section('proxy', {
  advanced_proxy_url: z.string().nullable().default(null),
});
const RecordingSettings = section('recording', {
  /** Every computer records from creation unless created with `"recording": false`. */
  enabled: z.boolean().default(true),
  /** Days a recording is kept after its computer ended. */
  retention_days: z.number().positive().default(7),
  /** Megabytes all recordings may take; the oldest ended ones are dropped first beyond it. */
  max_disk_mb: z.number().int().min(1).default(10_240),
  /** The ffmpeg that encodes videos; null: `ffmpeg` on PATH, else the one shipped with Benchtop. */
  ffmpeg_path: z.string().min(1).nullable().default(null),
});
const ApprovalSettings = section('approvals', {
  /** Seconds a held action waits for a person; then the approval expires and nothing runs. */
  timeout_seconds: z.number().positive().max(86_400).default(300),
});
const NotificationSettings = section('notifications', {
  /** Each new item that waits for a person is POSTed here (JSON), signed with webhook_secret. */
  webhook_url: z
    .url({ protocol: /^https?$/ })
    .nullable()
    .default(null),
  /** Key of the HMAC-SHA256 signature in x-benchtop-signature. */
  webhook_secret: z.string().min(1).nullable().default(null),
});
/** The earlier price format under `models.prices`, still read when a provider has no `price`. */
export const ModelPrice = z.strictObject({
  input_per_million: z.number().min(0),
  output_per_million: z.number().min(0),
  cached_input_per_million: z.number().min(0).optional(),
});
export type ModelPrice = z.infer<typeof ModelPrice>;
const ModelSettings = section('models', {
  default: z.string().default('tzafon.northstar-cua-fast'),
  providers: z.record(z.string(), ModelConfig).default({
    'tzafon.northstar-cua-fast': {
      provider: 'lightcone',
      base_url: 'https://api.tzafon.ai',
      api_key_env: 'LIGHTCONE_CLOUD_API_KEY',
    },
  }),
  /**
   * Earlier home of prices, by Benchtop model name: still read for a model whose provider entry
   * has no `price`, so a config.json written before the move keeps loading and pricing.
   */
  prices: z.record(z.string(), ModelPrice).default({}),
  /** Every provider whose base_url is not a loopback address is refused before any connection. */
  local_only: z.boolean().default(false),
});

const SECTIONS =
  'server, browser, desktop, exec, organizations, limits, proxy, recording, models, policies, approvals, notifications';
const topLevel = {
  error: (issue: z.core.$ZodRawIssue) =>
    issue.code === 'unrecognized_keys'
      ? `unknown settings section ${issue.keys.join(', ')}; the sections are ${SECTIONS}`
      : undefined,
};

/** The one settings schema: the store, BENCHTOP_CONFIG, BENCHTOP_* variables and flags all fill it. */
export const Settings = z.strictObject(
  {
    server: ServerSettings.prefault({}),
    browser: BrowserSettings.prefault({}),
    desktop: DesktopSettings.prefault({}),
    exec: ExecSettings.prefault({}),
    organizations: OrganizationsSettings.default({}),
    limits: LimitSettings.prefault({}),
    proxy: ProxySettings.prefault({}),
    recording: RecordingSettings.prefault({}),
    models: ModelSettings.prefault({}),
    policies: PolicyList.default([]),
    approvals: ApprovalSettings.prefault({}),
    notifications: NotificationSettings.prefault({}),
  },
  topLevel,
);
export type Settings = z.infer<typeof Settings>;
export type SettingsInput = z.input<typeof Settings>;

/**
 * PATCH /settings: any part of the settings, deep-merged into config.json. `null` removes a key
 * (its default applies again); a provider entry may name only the fields that change.
 */
export const SettingsPatch = z
  .strictObject(
    {
      server: ServerSettings.partial(),
      browser: BrowserSettings.partial(),
      desktop: DesktopSettings.partial(),
      exec: ExecSettings.partial(),
      organizations: z
        .record(z.string(), OrganizationSettings.partial().nullable())
        .superRefine(notTheOwner),
      limits: LimitSettings.partial(),
      proxy: ProxySettings.partial(),
      recording: RecordingSettings.partial(),
      models: ModelSettings.extend({
        providers: z.record(z.string(), ModelConfig.partial()),
      }).partial(),
      policies: PolicyList,
      approvals: ApprovalSettings.partial(),
      notifications: NotificationSettings.partial(),
    },
    topLevel,
  )
  .partial()
  .meta({ id: 'SettingsPatch' });
export type SettingsPatch = z.input<typeof SettingsPatch>;

export const SettingsAnswer = z
  .object({
    settings: Settings.describe(
      `The settings in effect (config.json, then BENCHTOP_CONFIG, BENCHTOP_* variables and flags), secrets masked: a set api_key reads "${MASKED_SECRET}", the password of the proxy or of a backend's url "***".`,
    ),
    restart_required: z
      .array(z.string())
      .describe(
        'Keys changed in config.json since Benchtop started that it reads only at start, e.g. "server.port".',
      ),
    overridden: z
      .array(z.string())
      .describe(
        'Keys set by BENCHTOP_CONFIG, BENCHTOP_* variables or flags: they win over config.json while Benchtop runs with them, so a change stored here applies after a start without them.',
      ),
  })
  .meta({ id: 'SettingsAnswer' });
export type SettingsAnswer = z.infer<typeof SettingsAnswer>;
