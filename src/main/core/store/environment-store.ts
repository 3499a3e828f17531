import { randomBytes } from 'node:crypto';
import { cp, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../../../shared/computers.js';
import { BenchtopError, invalidRequest, notFound } from '../errors.js';
import { now } from '../ids.js';
import { makeDirectory } from '../storage-errors.js';
import { narrow, PRIVATE_DIR, PRIVATE_FILE } from './private-files.js';

export type EnvironmentMeta = Environment & { org: string };

/** What a save puts into the new environment folder besides meta.json. */
export type EnvironmentState =
  { kind: 'browser'; storageState: unknown } | { kind: 'desktop'; workspace: string };

const META = 'meta.json';
const STORAGE_STATE = 'storage-state.json';
const WORKSPACE = 'workspace';
const TEMP_PREFIX = '.tmp-';
const OLD_PREFIX = '.old-';
const ID_PATTERN = /^[A-Za-z0-9_-]{1,200}$/;
/**
 * Organization names encodeURIComponent leaves as the environments folder itself ("" and ".")
 * or the data dir (".."): their keys would reach every organization's environments. Their
 * folders are named with escapes encodeURIComponent never makes, so no other name meets them.
 */
const FOLDER_NAMES: Record<string, string> = { '': '%', '.': '%2E', '..': '%2E%2E' };

/**
 * Where a save can be held for the crash tests: `written` once the new folder is complete and on
 * disk (nothing moved yet), `swapping` once the old folder is moved aside and before the new one
 * is renamed in (the environment's own folder is absent then).
 */
export type SaveStage = 'written' | 'swapping';
/** Called at each stage of a save; the save goes on when the promise settles. */
export type SaveFaultPoint = (stage: SaveStage) => Promise<void>;

/** The variable that stops saves for the crash tests: `<stage>:<file>`. */
export const STOP_SAVE_VARIABLE = 'BENCHTOP_TEST_STOP_SAVE';

/**
 * The crash tests' fault point: with BENCHTOP_TEST_STOP_SAVE=<stage>:<file>, a save that reaches
 * <stage> creates <file> and never goes on, so a test can kill Benchtop provably inside a save.
 */
export function faultPointFromEnv(
  env: Record<string, string | undefined> = process.env,
): SaveFaultPoint | undefined {
  const value = env[STOP_SAVE_VARIABLE];
  if (!value) return undefined;
  const colon = value.indexOf(':');
  const [stage, file] = [value.slice(0, colon), value.slice(colon + 1)];
  return async (reached) => {
    if (reached !== stage) return;
    await writeFile(file, reached);
    await new Promise<never>(() => {});
  };
}

/**
 * Saved environments, one folder each under <root>/<org>/<id>/: meta.json plus the browser's
 * storage-state.json or the desktop's workspace/. A save writes a complete folder next to the old
 * one, fsyncs it and renames it into place, so a crash leaves the old environment or the new one.
 */
export class EnvironmentStore {
  /** Saves in flight per environment, so two saves into one environment run one after the other. */
  private readonly saving = new Map<string, Promise<unknown>>();

  constructor(
    private readonly root: string,
    private readonly faultPoint: SaveFaultPoint | undefined = faultPointFromEnv(),
  ) {}

  /** Finishes or undoes swaps a crash interrupted and removes half-written folders. */
  async init(): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: PRIVATE_DIR });
    // Folders an earlier version made with wider modes.
    narrow(this.root, PRIVATE_DIR);
    for (const org of await readdir(this.root)) {
      const dir = join(this.root, org);
      if (!(await stat(dir)).isDirectory()) continue;
      narrow(dir, PRIVATE_DIR);
      for (const name of await readdir(dir)) {
        if (name.startsWith(TEMP_PREFIX)) {
          await rm(join(dir, name), { recursive: true, force: true });
        } else if (name.startsWith(OLD_PREFIX)) {
          const id = name.slice(OLD_PREFIX.length).split('.')[0]!;
          // The old folder is moved aside just before the new one is renamed in: if the new one
          // never arrived, the old one is still the environment.
          if (await exists(join(dir, id)))
            await rm(join(dir, name), { recursive: true, force: true });
          else await rename(join(dir, name), join(dir, id));
        }
      }
      await syncDir(dir);
    }
  }

  async list(org: string): Promise<Environment[]> {
    const dir = this.orgDir(org);
    const names = await readdir(dir).catch(() => [] as string[]);
    const ids = names.filter((name) => ID_PATTERN.test(name) && !name.startsWith('.'));
    // One environment mid-save (briefly absent) or unreadable must not fail the whole list; a
    // broken one is still named when someone restores it, and never overwritten.
    const settled = await Promise.allSettled(ids.map((id) => this.get(org, id, 'id')));
    return settled
      .flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []))
      .map(({ org: _org, ...environment }) => environment)
      .sort((a, b) => a.created_at.localeCompare(b.created_at));
  }

  /** The environment's record; unknown (or another organization's) is an error about `param`. */
  async get(org: string, id: string, param = 'environment_id'): Promise<EnvironmentMeta> {
    const dir = this.dirOf(org, id, param);
    const text = await readFile(join(dir, META), 'utf8').catch(() => undefined);
    if (text === undefined) throw this.unknown(id, param);
    try {
      return JSON.parse(text) as EnvironmentMeta;
    } catch {
      throw this.unreadable(id, META, param);
    }
  }

  async storageState(org: string, id: string): Promise<unknown> {
    const file = join(this.dirOf(org, id), STORAGE_STATE);
    try {
      return JSON.parse(await readFile(file, 'utf8'));
    } catch {
      throw this.unreadable(id, STORAGE_STATE, 'environment_id');
    }
  }

  /** Copies a desktop environment's workspace into a new computer's (empty) workspace folder. */
  async restoreWorkspace(org: string, id: string, workspace: string): Promise<void> {
    await cp(join(this.dirOf(org, id), WORKSPACE), workspace, { recursive: true, force: true });
  }

  /** Saves state as environment id, replacing the previous version of it in one rename. */
  save(org: string, id: string, sourceComputerId: string, state: EnvironmentState): Promise<void> {
    const key = `${org}\u0000${id}`;
    const previous = this.saving.get(key) ?? Promise.resolve();
    const run = previous.catch(() => {}).then(() => this.write(org, id, sourceComputerId, state));
    this.saving.set(key, run);
    void run
      .finally(() => {
        if (this.saving.get(key) === run) this.saving.delete(key);
      })
      .catch(() => {});
    return run;
  }

  private async write(
    org: string,
    id: string,
    sourceComputerId: string,
    state: EnvironmentState,
  ): Promise<void> {
    const target = this.dirOf(org, id);
    const existing = await exists(target);
    // An environment that cannot be read is kept for a person to look at, never overwritten.
    const previous = existing ? await this.get(org, id, 'id') : undefined;
    if (previous && previous.kind !== state.kind) {
      throw invalidRequest(
        `environment ${id} holds a ${previous.kind} computer, not a ${state.kind} one`,
        'environment_id',
      );
    }
    const dir = this.orgDir(org);
    const suffix = randomBytes(6).toString('hex');
    const temp = join(dir, `${TEMP_PREFIX}${id}.${suffix}`);
    await makeDirectory(temp);
    try {
      const stamp = now();
      const meta: EnvironmentMeta = {
        id,
        kind: state.kind,
        org,
        created_at: previous?.created_at ?? stamp,
        updated_at: stamp,
        source_computer_id: sourceComputerId,
      };
      if (state.kind === 'browser') {
        await writeDurably(join(temp, STORAGE_STATE), JSON.stringify(state.storageState));
      } else {
        await cp(state.workspace, join(temp, WORKSPACE), {
          recursive: true,
          verbatimSymlinks: true,
        });
        await syncTree(join(temp, WORKSPACE));
      }
      await writeDurably(join(temp, META), `${JSON.stringify(meta, null, 2)}\n`);
      await syncDir(temp);
      await this.faultPoint?.('written');
      await this.swapIn(dir, id, temp, existing, suffix);
    } catch (error) {
      await rm(temp, { recursive: true, force: true });
      throw error;
    }
  }

  /** Moves the old folder aside, renames the new one in, then drops the old one. */
  private async swapIn(
    dir: string,
    id: string,
    temp: string,
    existing: boolean,
    suffix: string,
  ): Promise<void> {
    const target = join(dir, id);
    const old = join(dir, `${OLD_PREFIX}${id}.${suffix}`);
    if (existing) await rename(target, old);
    try {
      await this.faultPoint?.('swapping');
      await rename(temp, target);
    } catch (error) {
      if (existing) await rename(old, target);
      throw error;
    }
    await syncDir(dir);
    if (existing) await rm(old, { recursive: true, force: true });
  }

  async delete(org: string, id: string): Promise<void> {
    const target = this.dirOf(org, id, 'id');
    if (!(await exists(target))) throw notFound(`no environment ${id}`, 'id');
    const aside = join(this.orgDir(org), `${TEMP_PREFIX}${id}.${randomBytes(6).toString('hex')}`);
    // Renamed first so the environment disappears at once; a crash leaves only a temp folder.
    await rename(target, aside);
    await syncDir(this.orgDir(org));
    await rm(aside, { recursive: true, force: true });
  }

  private orgDir(org: string): string {
    const name = encodeURIComponent(org);
    return join(this.root, FOLDER_NAMES[name] ?? name);
  }

  private dirOf(org: string, id: string, param = 'environment_id'): string {
    if (!ID_PATTERN.test(id)) throw this.unknown(id, param);
    return join(this.orgDir(org), id);
  }

  private unknown(id: string, param: string): BenchtopError {
    const message = `no saved environment ${id}; list them with GET /computers?type=persistent`;
    return param === 'environment_id' ? invalidRequest(message, param) : notFound(message, param);
  }

  private unreadable(id: string, file: string, param: string): BenchtopError {
    return new BenchtopError(
      param === 'environment_id' ? 'invalid_request' : 'internal',
      `saved environment ${id} is unreadable (${file} is not valid JSON); delete it with DELETE /environments/${id}`,
      { path: param },
    );
  }
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** Saved cookies and storage are as good as a password: readable by this user only. */
async function writeDurably(file: string, data: string): Promise<void> {
  const handle = await open(file, 'w', PRIVATE_FILE);
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** fsyncs every file and folder below dir (a copied workspace). */
async function syncTree(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await syncTree(path);
    else if (entry.isFile()) {
      const handle = await open(path, 'r');
      await handle.sync().finally(() => handle.close());
    }
  }
  await syncDir(dir);
}
