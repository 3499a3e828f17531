import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type FormEvent, type ReactNode } from 'react';
import {
  GATED_TYPES,
  POLICY_DECISIONS,
  type GatedType,
  type Policy,
} from '../../../shared/approvals.js';
import { ApiError } from '../../../shared/client/api-client.js';
import { useApi } from '../api/api-context.js';
import { errorText, firstError } from '../api/error-text.js';
import { policiesQuery, queryKeys } from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import {
  fieldOfParam,
  newDraft,
  toDraft,
  toPolicy,
  type DraftField,
  type PolicyDraft,
} from './policy-drafts.js';

/** A failed save: the server's message, and the policy and field it names when it names one. */
type SaveError = { message: string; index?: number; field?: DraftField };
type Status = { busy?: boolean; saved?: boolean; error?: SaveError };

const DECISION_WORDS: Record<Policy['then'], string> = {
  ask: 'Ask me',
  deny: 'Refuse',
  allow: 'Allow',
};

/** The policies every acting path is checked against: edited as a list, saved whole. */
export function PoliciesSection() {
  const api = useApi();
  const queryClient = useQueryClient();
  const policies = useQuery(policiesQuery(api));
  const [drafts, setDrafts] = useState<PolicyDraft[]>();
  const [status, setStatus] = useState<Status>({});
  // Once read, and again after a save: the list shows what is stored now.
  useEffect(() => {
    if (policies.data) setDrafts(policies.data.map(toDraft));
  }, [policies.data]);
  const put = useMutation({
    mutationFn: (list: Policy[]) => api.call('policies.put', { body: list }),
    onSuccess: (answer) => queryClient.setQueryData(queryKeys.policies, answer),
  });

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!drafts) return;
    setStatus({ busy: true });
    try {
      await put.mutateAsync(drafts.map(toPolicy));
      setStatus({ saved: true });
    } catch (failure) {
      const where = failure instanceof ApiError ? fieldOfParam(failure.param) : undefined;
      setStatus({ error: { message: errorText(failure), ...where } });
    }
  };
  const change = (update: (list: PolicyDraft[]) => PolicyDraft[]) => {
    setDrafts((list) => update(list ?? []));
    setStatus({});
  };

  return (
    <form
      className="panel policies"
      aria-labelledby="policies-title"
      onSubmit={(event) => void submit(event)}
    >
      <h2 id="policies-title">Approval policies</h2>
      <p className="muted">
        Every action a computer is asked to perform — by the API, a batch, an agent task or a shell
        command — is checked against these in order. The first policy whose conditions all match
        decides: ask a person, refuse, or allow. An action no policy matches is allowed.
      </p>
      <ErrorText message={firstError(policies.error)} />
      {!drafts && !policies.error && <Spinner label="loading policies" />}
      {drafts?.length === 0 && <p className="muted">No policy: every action runs.</p>}
      {drafts && drafts.length > 0 && (
        <ol className="policy-list">
          {drafts.map((draft, index) => (
            <li key={draft.key}>
              <PolicyEditor
                draft={draft}
                index={index}
                count={drafts.length}
                error={status.error?.index === index ? status.error : undefined}
                onChange={(next) =>
                  change((list) => list.map((old, n) => (n === index ? next : old)))
                }
                onMove={(to) => change((list) => move(list, index, to))}
                onRemove={() => change((list) => list.filter((_, n) => n !== index))}
              />
            </li>
          ))}
        </ol>
      )}
      <div className="form-actions">
        {drafts && (
          <button
            type="button"
            className="secondary"
            onClick={() => change((list) => [...list, newDraft(list)])}
          >
            Add a policy
          </button>
        )}
        <button type="submit" disabled={status.busy || !drafts}>
          Save policies {status.busy && <Spinner label="saving" />}
        </button>
        {status.saved && <span role="status">Saved.</span>}
      </div>
      {status.error && status.error.index === undefined && (
        <ErrorText message={status.error.message} />
      )}
    </form>
  );
}

function move<T>(list: T[], from: number, to: number): T[] {
  if (to < 0 || to >= list.length) return list;
  const next = [...list];
  const [item] = next.splice(from, 1);
  next.splice(to, 0, item!);
  return next;
}

type EditorProps = {
  draft: PolicyDraft;
  index: number;
  count: number;
  error: SaveError | undefined;
  onChange: (draft: PolicyDraft) => void;
  onMove: (to: number) => void;
  onRemove: () => void;
};

function PolicyEditor({ draft, index, count, error, onChange, onMove, onRemove }: EditorProps) {
  const set = <F extends DraftField>(field: F, value: PolicyDraft[F]) =>
    onChange({ ...draft, [field]: value });
  const problem = (field: DraftField) => (error?.field === field ? error.message : undefined);
  const textField = (field: DraftField, label: string, placeholder?: string) => (
    <Field label={label} error={problem(field)}>
      <input
        type="text"
        value={draft[field] as string}
        placeholder={placeholder}
        spellCheck={false}
        aria-invalid={problem(field) ? true : undefined}
        onChange={(event) => set(field, event.target.value)}
      />
    </Field>
  );
  return (
    <fieldset className="policy" aria-label={`Policy ${index + 1}: ${draft.id}`}>
      <div className="policy-head">
        <span className="policy-rank">{index + 1}</span>
        {textField('id', 'Id')}
        <Field label="Then" error={problem('then')}>
          <select
            value={draft.then}
            onChange={(event) => set('then', event.target.value as Policy['then'])}
          >
            {POLICY_DECISIONS.map((decision) => (
              <option key={decision} value={decision}>
                {DECISION_WORDS[decision]}
              </option>
            ))}
          </select>
        </Field>
        {textField('description', 'Description (shown to the person asked)')}
        <span className="policy-moves">
          <button
            type="button"
            className="secondary"
            disabled={index === 0}
            aria-label={`Move ${draft.id} up`}
            onClick={() => onMove(index - 1)}
          >
            ↑
          </button>
          <button
            type="button"
            className="secondary"
            disabled={index === count - 1}
            aria-label={`Move ${draft.id} down`}
            onClick={() => onMove(index + 1)}
          >
            ↓
          </button>
          <button
            type="button"
            className="danger"
            aria-label={`Delete ${draft.id}`}
            onClick={onRemove}
          >
            Delete
          </button>
        </span>
      </div>
      <ActionTypes
        selected={draft.action_types}
        error={problem('action_types')}
        onChange={(types) => set('action_types', types)}
      />
      <div className="policy-fields">
        {textField('url_pattern', 'Page URL (glob)', 'https://*.bank.example/**')}
        {textField('target.role', 'Target role', 'button')}
        {textField('target.name_pattern', 'Target name (regex)', '^(Pay|Buy)')}
        {textField('target.input_type', 'Target input type', 'password')}
        {textField('text_pattern', 'Typed text (regex)')}
        {textField('command_pattern', 'Shell command (regex)', '^rm ')}
        {textField('computer_ids', 'Only these computers (ids)', 'comp_…, comp_…')}
      </div>
      <div className="policy-flags">
        <Flag
          label="Only when it leaves the page’s origin"
          checked={draft.new_origin}
          error={problem('new_origin')}
          onChange={(value) => set('new_origin', value)}
        />
        <Flag
          label="Only actions of agent tasks"
          checked={draft.task_only}
          error={problem('task_only')}
          onChange={(value) => set('task_only', value)}
        />
      </div>
      {error && !error.field && <ErrorText message={error.message} />}
    </fieldset>
  );
}

function Field({ label, error, children }: { label: string; error?: string; children: ReactNode }) {
  return (
    <div className="policy-field">
      <label>
        {label}
        {children}
      </label>
      <ErrorText message={error} />
    </div>
  );
}

function Flag(props: {
  label: string;
  checked: boolean;
  error?: string;
  onChange: (value: boolean) => void;
}) {
  return (
    <div className="policy-field">
      <label className="checkbox">
        <input
          type="checkbox"
          checked={props.checked}
          onChange={(event) => props.onChange(event.target.checked)}
        />
        {props.label}
      </label>
      <ErrorText message={props.error} />
    </div>
  );
}

function ActionTypes(props: {
  selected: readonly GatedType[];
  error?: string;
  onChange: (types: GatedType[]) => void;
}) {
  const { selected, onChange } = props;
  return (
    <fieldset className="action-types">
      <legend>
        Action types{' '}
        <span className="muted">
          (none checked: every action but screenshot, html, list_tabs and wait; with a target, not a
          move or scroll over it either)
        </span>
      </legend>
      {GATED_TYPES.map((type) => (
        <label key={type} className="checkbox chip">
          <input
            type="checkbox"
            checked={selected.includes(type)}
            onChange={(event) =>
              onChange(
                event.target.checked ? [...selected, type] : selected.filter((old) => old !== type),
              )
            }
          />
          {type}
        </label>
      ))}
      <ErrorText message={props.error} />
    </fieldset>
  );
}
