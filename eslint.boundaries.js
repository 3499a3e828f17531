import boundaries from 'eslint-plugin-boundaries';

/**
 * Which folder may import which: an allow-list (anything not listed fails lint). Core's folders are
 * ordered: each may use only those below it, so no cycle between them can form.
 */
const FOLDERS = [
  { type: 'shared-client', pattern: 'src/shared/client' },
  { type: 'shared-contract', pattern: 'src/shared/contract' },
  { type: 'shared', pattern: 'src/shared' },
  { type: 'core', pattern: 'src/main/core/*', capture: ['part'] },
  { type: 'core-base', pattern: 'src/main/core' },
  { type: 'server', pattern: 'src/main/server' },
  { type: 'mcp', pattern: 'src/main/mcp' },
  { type: 'window', pattern: 'src/main/window' },
  { type: 'launcher', pattern: 'src/main/launcher' },
  // The roots: cli.ts, index.ts and start-benchtop.ts (every folder of src/main is matched above).
  { type: 'root', pattern: 'src/main' },
  { type: 'preload', pattern: 'src/preload' },
  { type: 'renderer', pattern: 'src/renderer' },
];
/** A folder: a type of FOLDERS, or `core/<part>` for one of core's folders. */
const folder = (name) =>
  name.startsWith('core/')
    ? { element: { type: 'core', captured: { part: name.slice('core/'.length) } } }
    : { element: { type: name } };
const may = (from, to) => ({
  from: folder(from),
  allow: [from, ...to].map((t) => ({ to: folder(t) })),
});
const base = ['shared', 'core-base'];
const POLICIES = [
  may('shared', []),
  may('shared-contract', ['shared']),
  may('shared-client', ['shared', 'shared-contract']),
  may('core-base', ['shared', 'core/runtime', 'core/store']),
  may('core/runtime', base),
  may('core/store', base),
  may('core/events', base),
  may('core/keyboard', base),
  may('core/guards', base),
  may('core/screenshots', [...base, 'core/store']),
  may('core/sandbox', [...base, 'core/runtime']),
  may('core/computers', [
    ...base,
    ...['events', 'keyboard', 'runtime', 'sandbox', 'screenshots', 'store'].map((p) => `core/${p}`),
  ]),
  may('core/screencast', [...base, 'core/computers']),
  may('core/shell', [...base, 'core/computers', 'core/events', 'core/runtime', 'core/sandbox']),
  may('core/approvals', [
    ...base,
    ...['computers', 'events', 'screenshots', 'store'].map((p) => `core/${p}`),
  ]),
  may('core/attention', [...base, 'core/store']),
  may('core/secrets', [...base, 'core/store']),
  may('core/actions', [
    ...base,
    ...['approvals', 'computers', 'events', 'screenshots', 'secrets', 'shell'].map(
      (p) => `core/${p}`,
    ),
  ]),
  may('core/recordings', [
    ...base,
    ...['computers', 'events', 'runtime', 'screencast', 'secrets', 'store'].map((p) => `core/${p}`),
  ]),
  may('core/facades', [...base, 'core/actions', 'core/approvals', 'core/computers', 'core/shell']),
  may('core/models', [...base, 'core/keyboard', 'core/screenshots', 'core/store']),
  may('core/agent', [
    ...base,
    ...['actions', 'approvals', 'computers', 'events', 'models', 'screenshots', 'store'].map(
      (p) => `core/${p}`,
    ),
  ]),
  // create-core.ts composes core: it alone sits in core's base and may use all of core.
  {
    from: { file: { categories: 'composition' } },
    allow: [{ to: { element: { type: 'core' } } }],
  },
  // MCP is another transport: its tools call the same core the routes call.
  may('mcp', base),
  may('server', [
    ...base,
    'mcp',
    'shared-contract',
    ...['computers', 'guards', 'models', 'store'].map((p) => `core/${p}`),
  ]),
  // The window's quit shares the servers' shutdown deadline.
  may('window', ['shared', 'core/runtime']),
  may('launcher', ['root', 'core/runtime']),
  may('root', [...base, 'server', 'mcp', 'window', 'launcher', 'core']),
  may('preload', ['shared']),
  may('renderer', ['shared', 'shared-contract', 'shared-client']),
];

/** The allow-list as an ESLint config block (used by eslint.config.js and by its own test). */
export const folderBoundaries = {
  files: ['src/**/*.{ts,tsx}'],
  plugins: { boundaries },
  settings: {
    'import/resolver': { typescript: { alwaysTryTypes: true } },
    'boundaries/elements': FOLDERS,
    'boundaries/files': [{ category: 'composition', pattern: 'src/main/core/create-core.ts' }],
  },
  rules: { 'boundaries/dependencies': ['error', { default: 'disallow', policies: POLICIES }] },
};
