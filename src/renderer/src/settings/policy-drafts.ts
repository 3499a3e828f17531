import {
  GATED_TYPES,
  type GatedType,
  type Policy,
  type PolicyDecision,
  type PolicyWhen,
} from '../../../shared/approvals.js';

/** A policy as a person edits it: every field a string or a flag, empty meaning "not given". */
export type PolicyDraft = {
  /** Which row this is while rows move (never sent). */
  key: number;
  id: string;
  description: string;
  then: PolicyDecision;
  action_types: GatedType[];
  url_pattern: string;
  new_origin: boolean;
  'target.role': string;
  'target.name_pattern': string;
  'target.input_type': string;
  text_pattern: string;
  command_pattern: string;
  /** Computer ids separated by commas or spaces. */
  computer_ids: string;
  task_only: boolean;
};

/** A field of a draft that an error can name. */
export type DraftField = Exclude<keyof PolicyDraft, 'key'>;

let nextKey = 1;

export function toDraft(policy: Policy): PolicyDraft {
  const when = policy.when;
  return {
    key: nextKey++,
    id: policy.id,
    description: policy.description ?? '',
    then: policy.then,
    action_types: [...(when.action_types ?? [])],
    url_pattern: when.url_pattern ?? '',
    new_origin: when.new_origin === true,
    'target.role': when.target?.role ?? '',
    'target.name_pattern': when.target?.name_pattern ?? '',
    'target.input_type': when.target?.input_type ?? '',
    text_pattern: when.text_pattern ?? '',
    command_pattern: when.command_pattern ?? '',
    computer_ids: (when.computer_ids ?? []).join(', '),
    task_only: when.task_only === true,
  };
}

/** A new policy: asks before every click, until the person narrows it. */
export function newDraft(taken: readonly PolicyDraft[]): PolicyDraft {
  const ids = new Set(taken.map((draft) => draft.id));
  let n = taken.length + 1;
  while (ids.has(`policy-${n}`)) n += 1;
  return toDraft({ id: `policy-${n}`, when: { action_types: ['click'] }, then: 'ask' });
}

const text = (value: string) => value.trim() || undefined;
/** A regular expression is sent as typed: its spaces may be what it looks for. */
const pattern = (value: string) => value || undefined;

/** What is sent: only the conditions given, in the contract's shape (all must match). */
export function toPolicy(draft: PolicyDraft): Policy {
  const target = {
    role: text(draft['target.role']),
    name_pattern: pattern(draft['target.name_pattern']),
    input_type: text(draft['target.input_type']),
  };
  const computerIds = draft.computer_ids.split(/[\s,]+/).filter(Boolean);
  const when: PolicyWhen = {
    action_types: draft.action_types.length > 0 ? orderedTypes(draft.action_types) : undefined,
    url_pattern: text(draft.url_pattern),
    new_origin: draft.new_origin || undefined,
    target: Object.values(target).some(Boolean) ? target : undefined,
    text_pattern: pattern(draft.text_pattern),
    command_pattern: pattern(draft.command_pattern),
    computer_ids: computerIds.length > 0 ? computerIds : undefined,
    task_only: draft.task_only || undefined,
  };
  return {
    id: draft.id.trim(),
    description: text(draft.description),
    when: dropUndefined(when),
    then: draft.then,
  };
}

function orderedTypes(types: readonly GatedType[]): GatedType[] {
  return GATED_TYPES.filter((type) => types.includes(type));
}

function dropUndefined<T extends object>(value: T): T {
  const entries = Object.entries(value).filter(([, field]) => field !== undefined);
  return Object.fromEntries(
    entries.map(([name, field]) => [
      name,
      typeof field === 'object' && !Array.isArray(field) ? dropUndefined(field as object) : field,
    ]),
  ) as T;
}

const WHEN_FIELDS = new Set<string>([
  'action_types',
  'url_pattern',
  'new_origin',
  'target.role',
  'target.name_pattern',
  'target.input_type',
  'text_pattern',
  'command_pattern',
  'computer_ids',
  'task_only',
]);

/**
 * Where a 400's `param` points in the list ("2.when.target.name_pattern" → the third policy's
 * target name pattern; "1.when.action_types.0" → its action types). A param naming no field
 * of a policy gives the policy alone (field undefined); one naming no policy gives undefined.
 */
export function fieldOfParam(
  param: string | undefined,
): { index: number; field?: DraftField } | undefined {
  const parts = param?.split('.') ?? [];
  const index = Number(parts[0]);
  if (parts.length === 0 || !Number.isInteger(index) || parts[0] === '') return undefined;
  const [top, ...rest] = parts.slice(1);
  if (top === 'id' || top === 'description' || top === 'then') return { index, field: top };
  if (top !== 'when') return { index };
  const nested = rest[0] === 'target' ? `target.${rest[1]}` : rest[0];
  return nested && WHEN_FIELDS.has(nested) ? { index, field: nested as DraftField } : { index };
}
