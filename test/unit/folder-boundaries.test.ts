import { join } from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { folderBoundaries } from '../../eslint.boundaries.js';

const repo = join(import.meta.dirname, '..', '..');

/** The boundary errors lint reports for `code` as if it were the file at `path`. */
async function boundaryErrors(path: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: repo,
    overrideConfigFile: true,
    overrideConfig: [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } },
      folderBoundaries,
    ],
  });
  const [result] = await eslint.lintText(code, { filePath: join(repo, path) });
  return result!.messages.map((message) => message.message);
}

describe('the import allow-list per folder', () => {
  it.each([
    ['core importing a composition root', 'src/main/core/probe.ts', '../start-benchtop.js'],
    ['the server importing a composition root', 'src/main/server/probe.ts', '../start-benchtop.js'],
    [
      'the server importing the Electron shell',
      'src/main/server/probe.ts',
      '../window/navigation-guard.js',
    ],
    [
      'computers importing the action runner above it',
      'src/main/core/computers/probe.ts',
      '../actions/action-runner.js',
    ],
    [
      'the store importing models',
      'src/main/core/store/probe.ts',
      '../models/responses-service.js',
    ],
    ['the renderer importing core', 'src/renderer/src/probe.ts', '../../main/core/errors.js'],
    ['shared importing core', 'src/shared/probe.ts', '../main/core/errors.js'],
  ])('refuses %s', async (_what, path, target) => {
    const errors = await boundaryErrors(path, `export * from '${target}';\n`);
    expect(errors).toEqual([expect.stringMatching(/no policy allowing dependencies/)]);
  });

  it.each([
    ['the server using core', 'src/main/server/probe.ts', '../core/create-core.js'],
    [
      'actions using shell and computers',
      'src/main/core/actions/probe.ts',
      '../shell/shell-service.js',
    ],
    ['create-core composing core', 'src/main/core/create-core.ts', './agent/task-service.js'],
    [
      'the renderer using the typed client',
      'src/renderer/src/probe.ts',
      '../../shared/client/api-client.js',
    ],
  ])('allows %s', async (_what, path, target) => {
    expect(await boundaryErrors(path, `export * from '${target}';\n`)).toEqual([]);
  });
});
