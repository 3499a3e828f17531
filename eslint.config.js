import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';

/** Layers: shared ← core ← server ← main roots; core and server never see Electron or each other upward. */
const layer = (files, patterns) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
});

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
  may('core/actions', [...base, 'core/computers', 'core/events', 'core/screenshots', 'core/shell']),
  may('core/facades', [...base, 'core/actions', 'core/computers', 'core/shell']),
  may('core/models', [...base, 'core/keyboard', 'core/screenshots', 'core/store']),
  may('core/agent', [
    ...base,
    ...['actions', 'computers', 'events', 'models', 'screenshots', 'store'].map((p) => `core/${p}`),
  ]),
  // create-core.ts composes core: it alone sits in core's base and may use all of core.
  {
    from: { file: { categories: 'composition' } },
    allow: [{ to: { element: { type: 'core' } } }],
  },
  may('server', [
    ...base,
    'shared-contract',
    ...['computers', 'guards', 'models', 'store'].map((p) => `core/${p}`),
  ]),
  may('window', ['shared']),
  may('launcher', ['root', 'core/runtime']),
  may('root', [...base, 'server', 'window', 'launcher', 'core']),
  may('preload', ['shared']),
  may('renderer', ['shared', 'shared-contract', 'shared-client']),
];
export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/no-unnecessary-type-assertion': 'off',
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  layer(
    ['src/shared/**'],
    [
      {
        group: [
          '**/main/**',
          '**/renderer/**',
          '**/preload/**',
          'electron',
          'express',
          'playwright-core',
        ],
        message: 'shared is the contract: zod only.',
      },
    ],
  ),
  layer(
    ['src/main/core/**'],
    [
      {
        group: ['electron', 'express', '**/server/**', '**/renderer/**'],
        message: 'core is plain Node: no Electron, no Express, no server.',
      },
    ],
  ),
  layer(
    ['src/main/server/**'],
    [
      {
        group: ['electron', '**/renderer/**', '**/cli', '**/index'],
        message: 'server is transport only: no Electron.',
      },
    ],
  ),
  {
    // The Electron shell's logic runs in unit tests under plain Node: Electron is passed in.
    files: ['src/main/window/**', 'src/main/launcher/**', 'src/preload/expose-connection.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['electron'],
              allowTypeImports: true,
              message: 'only src/main/index.ts and src/preload/index.ts load Electron.',
            },
          ],
        },
      ],
    },
  },
  layer(
    ['src/renderer/**'],
    [{ group: ['**/main/**', 'electron', 'node:*'], message: 'the renderer talks HTTP only.' }],
  ),
  { files: ['src/renderer/**'], languageOptions: { globals: { ...globals.browser } } },
  {
    // Tests read JSON off the wire; typing every response body would be noise.
    files: ['test/**', 'bench/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['src/**/*.{ts,tsx}'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { alwaysTryTypes: true } },
      'boundaries/elements': FOLDERS,
      'boundaries/files': [{ category: 'composition', pattern: 'src/main/core/create-core.ts' }],
    },
    rules: { 'boundaries/dependencies': ['error', { default: 'disallow', policies: POLICIES }] },
  },
  { files: ['bin/**', '*.config.*'], ...tseslint.configs.disableTypeChecked },
);
