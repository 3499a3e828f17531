import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import { folderBoundaries } from './eslint.boundaries.js';

/** Layers: shared ← core ← server ← main roots; core and server never see Electron or each other upward. */
const layer = (files, patterns) => ({
  files,
  rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns }] },
});

export default tseslint.config(
  // Fixture pages' scripts run in Chromium, not in the project.
  { ignores: ['out/**', 'dist/**', 'node_modules/**', 'test-results/**', 'test/fixtures/**'] },
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
  folderBoundaries,
  {
    files: ['bin/**', 'examples/**', '*.config.*', 'eslint.boundaries.*'],
    ...tseslint.configs.disableTypeChecked,
  },
);
