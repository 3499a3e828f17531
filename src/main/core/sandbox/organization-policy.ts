import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Settings } from '../config.js';
import { BenchtopError, unavailable } from '../errors.js';
import { ComputerSandbox, sandboxSupport, type SandboxSupport } from './computer-sandbox.js';

/** The organization of the person at the machine: keys made by the CLI, the window and the tray. */
export const OWNER_ORG = 'local';

/** A computer as the policy needs to know it. */
export type SandboxedComputer = {
  readonly id: string;
  readonly org: string;
  readonly spec: { readonly workspace: string; readonly sandboxed: boolean };
  readonly ended: AbortController;
  sandbox?: ComputerSandbox;
};

/**
 * Who may run what, and where: organizations other than the owner's get shell commands and
 * desktops only when the owner's settings allow it per organization, and always in a sandbox;
 * where none can be made, they get none. The owner's computers are sandboxed too unless
 * exec.sandbox_owner is false, and run on the host where no sandbox can be made.
 */
export class OrganizationPolicy {
  private readonly starting = new Map<string, Promise<ComputerSandbox>>();

  constructor(
    /** The settings as they are now (read at each decision, so a change applies at once). */
    private readonly settings: () => Readonly<Settings>,
    /** Where computers' private folders (a sandbox's /tmp, an X cookie) are made. */
    private readonly privateRoot: string,
    private readonly support: () => Promise<SandboxSupport> = sandboxSupport,
  ) {}

  /** Removes private folders a killed Benchtop left behind. */
  async init(): Promise<void> {
    await rm(this.privateRoot, { recursive: true, force: true });
  }

  privateDir(computerId: string): string {
    return join(this.privateRoot, computerId);
  }

  /** Whether the organization's sandboxes share the machine's network (the owner's always do). */
  network(org: string): boolean {
    return org === OWNER_ORG || (this.settings().organizations[org]?.network ?? true);
  }

  /** Throws exec_disabled when the organization may not run commands now. */
  checkExec(org: string): void {
    if (!this.settings().exec.enabled) {
      throw new BenchtopError(
        'exec_disabled',
        'shell commands are switched off in settings (exec.enabled)',
      );
    }
    if (org !== OWNER_ORG && !this.settings().organizations[org]?.exec) {
      throw new BenchtopError(
        'exec_disabled',
        `organization ${org} may not run shell commands; the owner can allow it with organizations.${org}.exec in settings`,
      );
    }
  }

  /** Whether the organization may run commands now (a desktop's terminal is started only then). */
  mayExec(org: string): boolean {
    try {
      this.checkExec(org);
      return true;
    } catch {
      return false;
    }
  }

  /** Throws forbidden when the organization may not create this kind of computer. */
  checkCreate(org: string, kind: 'browser' | 'desktop', hostDisplay: boolean): void {
    if (org === OWNER_ORG || kind === 'browser') return;
    if (hostDisplay) {
      throw new BenchtopError(
        'forbidden',
        "only the owner's organization (local) may drive this machine's real screen",
        { path: 'host_display' },
      );
    }
    if (!this.settings().organizations[org]?.desktops) {
      throw new BenchtopError(
        'forbidden',
        `organization ${org} may not create desktop computers; the owner can allow it with organizations.${org}.desktops in settings`,
        { path: 'kind' },
      );
    }
  }

  /**
   * Whether a new computer of the organization runs sandboxed. Another organization's computer
   * that would need a sandbox (a desktop, or commands) where none can be made is refused (503);
   * its browser alone needs none.
   */
  async sandboxed(org: string, kind: 'browser' | 'desktop'): Promise<boolean> {
    if (org === OWNER_ORG && !this.settings().exec.sandbox_owner) return false;
    const support = await this.support();
    if (support.available) return true;
    if (org === OWNER_ORG || kind === 'browser') return false;
    throw unavailable(
      `desktops of organization ${org} run only in a sandbox, and none can be made here: ${support.reason}`,
    );
  }

  /**
   * The sandbox a computer's commands run in: a desktop's, made when it started; a browser's,
   * started by its first command and ended with the computer. Undefined: on the host (the owner).
   */
  async sandboxOf(computer: SandboxedComputer): Promise<ComputerSandbox | undefined> {
    if (!computer.spec.sandboxed) {
      if (computer.org === OWNER_ORG) return undefined;
      // Decided when the computer was created, with no sandbox to be had then: still none.
      const support = await this.support();
      throw unavailable(
        `commands of organization ${computer.org} run only in a sandbox, and none can be made here: ${support.available ? 'the computer was created without one' : support.reason}`,
      );
    }
    if (computer.sandbox?.running) return computer.sandbox;
    let starting = this.starting.get(computer.id);
    if (!starting) {
      starting = this.startFor(computer).finally(() => this.starting.delete(computer.id));
      this.starting.set(computer.id, starting);
    }
    return starting;
  }

  private async startFor(computer: SandboxedComputer): Promise<ComputerSandbox> {
    // One that ended on its own (everything in it was killed from inside) is made again.
    await computer.sandbox?.close();
    const sandbox = await ComputerSandbox.start({
      workspace: computer.spec.workspace,
      privateDir: this.privateDir(computer.id),
      network: this.network(computer.org),
    });
    computer.sandbox = sandbox;
    const close = () => void sandbox.close();
    if (computer.ended.signal.aborted) close();
    else computer.ended.signal.addEventListener('abort', close, { once: true });
    return sandbox;
  }
}

/**
 * The environment of a command the owner runs on the host: Benchtop's own, without what is
 * Benchtop's (BENCHTOP_* variables: its key, its config) and without the provider keys it reads.
 */
export function hostEnv(settings: Settings): Record<string, string> {
  const secret = new Set(
    Object.values(settings.models.providers).flatMap((provider) =>
      provider.api_key_env ? [provider.api_key_env] : [],
    ),
  );
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined || name.startsWith('BENCHTOP_') || secret.has(name)) continue;
    env[name] = value;
  }
  return env;
}
