import type { PageContext } from '../../src/shared/actions.js';
import { ComputerSession } from '../../src/main/core/computers/computer-session.js';
import { invalidRequest } from '../../src/main/core/errors.js';
import type { ComputerKind } from '../../src/shared/computers.js';
import type {
  ActionName,
  ActionOutcome,
  ActionRequest,
} from '../../src/main/core/computers/action.js';
import type {
  ComputerDriver,
  ComputerPlan,
  StartContext,
} from '../../src/main/core/computers/drivers/driver.js';
import type {
  PageLook,
  Screenshot,
  TabbedOperator,
} from '../../src/main/core/computers/operator.js';
import type { EnvironmentState } from '../../src/main/core/store/environment-store.js';

/** A 1×1 PNG. */
const PIXEL = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

export const FAKE_TAB = 'tab_fake';

export type FakeOperatorOptions = {
  kind?: ComputerKind;
  capabilities?: Iterable<ActionName>;
  /** How perform answers (default: an empty result in the fake tab). */
  perform?: (request: ActionRequest) => Promise<ActionOutcome>;
  /** What look answers (default: the fake tab at about:blank, no element). */
  look?: () => PageLook;
};

/** An operator that performs nothing and records what it was asked, for unit tests of core. */
export class FakeOperator implements TabbedOperator {
  readonly kind: ComputerKind;
  readonly capabilities: ReadonlySet<ActionName>;
  readonly performed: ActionRequest[] = [];
  /** Every call in order: 'perform:<type>', 'screenshot', 'close'. */
  readonly calls: string[] = [];
  closed = false;
  /** It downloads nothing. */
  readonly downloads = {
    list: () => Promise.resolve([]),
    path: (name: string) => Promise.reject(new Error(`the fake downloaded no ${name}`)),
  };

  constructor(private readonly options: FakeOperatorOptions = {}) {
    this.kind = options.kind ?? 'browser';
    this.capabilities = new Set(options.capabilities ?? ['click', 'type', 'navigate', 'keypress']);
  }

  perform(request: ActionRequest): Promise<ActionOutcome> {
    this.performed.push(request);
    this.calls.push(`perform:${request.action.type}`);
    return (
      this.options.perform?.(request) ?? Promise.resolve({ result: {}, executedTabId: FAKE_TAB })
    );
  }

  screenshot(): Promise<Screenshot> {
    this.calls.push('screenshot');
    return Promise.resolve({ png: PIXEL, width: 1, height: 1, tabId: FAKE_TAB });
  }

  pageContext(): Promise<PageContext | undefined> {
    return Promise.resolve(undefined);
  }

  mainTabId(): string {
    return FAKE_TAB;
  }

  look(): Promise<PageLook> {
    this.calls.push('look');
    return Promise.resolve(
      this.options.look?.() ?? { tabId: FAKE_TAB, url: 'about:blank', target: null },
    );
  }

  startCapture(): Promise<() => Promise<void>> {
    return Promise.resolve(() => Promise.resolve());
  }

  close(): Promise<void> {
    this.calls.push('close');
    this.closed = true;
    return Promise.resolve();
  }
}

/** A driver whose computers are FakeOperators; it keeps them, and what it saved. */
export class FakeDriver implements ComputerDriver<FakeOperator> {
  readonly capabilities: ReadonlySet<ActionName>;
  readonly operators: FakeOperator[] = [];
  readonly contexts: StartContext[] = [];

  constructor(
    readonly kind: ComputerKind = 'browser',
    private readonly options: FakeOperatorOptions & {
      savesAfterClose?: boolean;
      /** A resource its computers hold one at a time (as the host display is held). */
      exclusive?: string;
      /** Each start reports this crash before it returns (a backend lost as the computer started). */
      crashWhileStarting?: 'crashed' | 'backend_lost';
    } = {},
  ) {
    this.capabilities = new FakeOperator({ ...options, kind }).capabilities;
  }

  get savesAfterClose(): boolean {
    return this.options.savesAfterClose ?? false;
  }

  prepare(): ComputerPlan {
    return {
      display: { width: 800, height: 600, scale: 1 },
      onHost: false,
      ...(this.options.exclusive !== undefined && {
        exclusive: {
          resource: this.options.exclusive,
          checkAvailable: () => {},
          busy: (holder: string) => invalidRequest(`held by ${holder}`, 'exclusive'),
        },
      }),
      start: (context) => {
        this.contexts.push(context);
        const operator = new FakeOperator({ ...this.options, kind: this.kind });
        this.operators.push(operator);
        if (this.options.crashWhileStarting) context.onCrash(this.options.crashWhileStarting);
        return Promise.resolve({ operator, env: {} });
      },
    };
  }

  saveState(operator: FakeOperator, workspace: string): Promise<EnvironmentState> {
    operator.calls.push('save');
    return Promise.resolve(
      this.kind === 'desktop'
        ? { kind: 'desktop', workspace }
        : { kind: 'browser', storageState: { cookies: [], origins: [] } },
    );
  }
}

/** A running computer of organization `local` around the fake, as core's own code sees one. */
export function fakeSession(
  operator: FakeOperator,
  { id = 'comp_fake', workspace = '/nonexistent' }: { id?: string; workspace?: string } = {},
): ComputerSession {
  return new ComputerSession(
    {
      id,
      org: 'local',
      kind: operator.kind,
      display: { width: 800, height: 600, scale: 1 },
      persistent: false,
      environmentId: null,
      contextId: null,
      workspace,
      env: {},
      sandboxed: false,
      maxLifetimeSeconds: null,
      inactivityTimeoutSeconds: 300,
      idleTimeoutEnabled: true,
    },
    operator,
  );
}
