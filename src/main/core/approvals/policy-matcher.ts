import { READ_TYPES, type Policy, type PolicyDecision } from '../../../shared/approvals.js';
import type { PageLook } from '../computers/operator.js';
import type { Action, Point } from '../computers/action.js';

/** What a policy is checked against: the action (or shell command) and who sent it. */
export type GateSubject = {
  computerId: string;
  /** The internal action; a shell command is { type: 'exec' | 'exec_sync', … } below. */
  action: Action | { type: 'exec' | 'exec_sync'; command: string };
  taskId?: string;
};

export type LookLevel = 'url' | 'target';
export type Looker = (level: LookLevel) => Promise<PageLook>;

export type PolicyMatch = { policy: Policy; decision: PolicyDecision };

type PagePredicate = (subject: GateSubject, look: PageLook) => boolean;

/**
 * A policy as predicates, cheapest first: on the action alone, then on the page's URL (known
 * without asking the page), then on the element acted on (read from the page).
 */
type CompiledPolicy = {
  policy: Policy;
  cheap: (subject: GateSubject) => boolean;
  url: PagePredicate | undefined;
  target: PagePredicate | undefined;
};

/**
 * The policies of docs/API.md §14, compiled once per list: first match wins, no match allows.
 * An action whose type no policy names costs one Set lookup per policy; the page (URL, the element
 * under the point) is read only when a policy whose other conditions hold asks about it.
 */
export class PolicyMatcher {
  private readonly compiled: CompiledPolicy[];

  constructor(policies: readonly Policy[]) {
    this.compiled = policies.map(compile);
  }

  get empty(): boolean {
    return this.compiled.length === 0;
  }

  /** The first policy that matches, or undefined (allowed). */
  async match(subject: GateSubject, look: Looker): Promise<PolicyMatch | undefined> {
    for (const entry of this.compiled) {
      if (!entry.cheap(subject)) continue;
      if (entry.url && !entry.url(subject, await look('url'))) continue;
      if (entry.target && !entry.target(subject, await look('target'))) continue;
      return { policy: entry.policy, decision: entry.policy.then };
    }
    return undefined;
  }
}

/** What a policy on an element leaves alone unless it names it: looks, and the pointer passing. */
const PASSING_TYPES: ReadonlySet<string> = new Set([...READ_TYPES, 'move', 'scroll']);

function compile(policy: Policy): CompiledPolicy {
  const when = policy.when;
  const cheap: Array<(subject: GateSubject) => boolean> = [];
  if (when.computer_ids) {
    const ids = new Set(when.computer_ids);
    cheap.push((subject) => ids.has(subject.computerId));
  }
  if (when.task_only) cheap.push((subject) => subject.taskId !== undefined);
  if (when.action_types) {
    const types = new Set<string>(when.action_types);
    cheap.push((subject) => namesOf(subject.action).some((name) => types.has(name)));
  } else {
    // Without action_types, every action that does something: a look at the page (an agent
    // task's own screenshot each step among them) is not held by a policy that does not name it.
    // Nor, by one on an element, the pointer passing over it: hovering or scrolling the page
    // with the pointer on a Pay button pays nothing, and a deny there would stop any scroll.
    const passes = when.target ? PASSING_TYPES : READ_TYPES;
    cheap.push((subject) => !passes.has(subject.action.type));
  }
  if (when.text_pattern) {
    const pattern = new RegExp(when.text_pattern);
    cheap.push((subject) => {
      const text = typedText(subject.action);
      return text !== undefined && pattern.test(text);
    });
  }
  if (when.command_pattern) {
    const pattern = new RegExp(when.command_pattern);
    cheap.push((subject) => {
      const command = commandOf(subject.action);
      return command !== undefined && pattern.test(command);
    });
  }
  let url: PagePredicate | undefined;
  if (when.url_pattern) {
    const pattern = globToRegExp(when.url_pattern);
    url = (_subject, look) => look.url !== null && pattern.test(look.url);
  }
  const target: PagePredicate[] = [];
  if (when.new_origin) target.push(leavesOrigin);
  if (when.target) {
    const { role, name_pattern, input_type } = when.target;
    const name = name_pattern === undefined ? undefined : new RegExp(name_pattern, 'i');
    target.push((_subject, { target: element }) => {
      if (!element) return false;
      if (role !== undefined && element.role?.toLowerCase() !== role.toLowerCase()) return false;
      if (name && !name.test(element.name ?? '')) return false;
      if (
        input_type !== undefined &&
        element.input_type?.toLowerCase() !== input_type.toLowerCase()
      )
        return false;
      return true;
    });
  }
  return {
    policy,
    cheap: (subject) => cheap.every((check) => check(subject)),
    url,
    target: target.length
      ? (subject, look) => target.every((check) => check(subject, look))
      : undefined,
  };
}

/** The names a policy's action_types may use for this action (its type and its aliases). */
export function namesOf(action: GateSubject['action']): string[] {
  switch (action.type) {
    case 'click': {
      const names = ['click'];
      if (action.count === 2) names.push('double_click');
      if (action.count === 3) names.push('triple_click');
      if (action.button === 'right') names.push('right_click');
      return names;
    }
    case 'point_and_type':
      return ['point_and_type', 'type', 'click'];
    case 'keypress':
      return ['keypress', 'key', 'hotkey'];
    case 'key_down':
    case 'key_up':
      return [action.type, 'key'];
    case 'exec':
    case 'exec_sync':
      return ['exec'];
    case 'debug':
      return ['debug', 'exec'];
    default:
      return [action.type];
  }
}

/** The point an action acts at, if it has one (what its target is read under). */
export function pointOf(action: GateSubject['action']): Point | undefined {
  if ('at' in action) return action.at;
  if (action.type === 'drag') return action.path[0];
  return undefined;
}

/** Typing and keys act on the focused element rather than under a point. */
export function typesText(action: GateSubject['action']): boolean {
  return (
    action.type === 'type' ||
    action.type === 'keypress' ||
    action.type === 'key_down' ||
    action.type === 'key_up'
  );
}

function typedText(action: GateSubject['action']): string | undefined {
  return action.type === 'type' || action.type === 'point_and_type' ? action.text : undefined;
}

function commandOf(action: GateSubject['action']): string | undefined {
  if (action.type === 'exec' || action.type === 'exec_sync') return action.command;
  if (action.type === 'debug') return action.command.command;
  return undefined;
}

/** A navigation, or a click on a link, whose destination has another origin than the page. */
function leavesOrigin(subject: GateSubject, look: PageLook): boolean {
  const { action } = subject;
  const destination =
    action.type === 'navigate' || action.type === 'new_tab'
      ? action.url
      : action.type === 'click'
        ? look.target?.href
        : undefined;
  if (!destination) return false;
  const from = originOf(look.url ?? 'about:blank');
  const to = originOf(destination, look.url ?? undefined);
  return to !== undefined && to !== from;
}

function originOf(url: string, base?: string): string | undefined {
  try {
    return new URL(url, base).origin;
  } catch {
    return undefined;
  }
}

/**
 * A URL glob: `**` any characters, `*` any but `/`, everything else literal (a query's `?` too);
 * the whole URL must match. Written out here because path globs (picomatch and the like) treat
 * the `//` of a URL and `?` as glob syntax.
 */
export function globToRegExp(glob: string): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i]!;
    if (char === '*' && glob[i + 1] === '*') {
      source += '.*';
      i++;
    } else if (char === '*') source += '[^/]*';
    else source += char.replace(/[.+?^${}()|[\]\\/-]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}
