import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { CallInput } from '../../../shared/client/api-client.js';
import type { ComputerKind } from '../../../shared/computers.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { environmentsQuery, queryKeys } from '../api/queries.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';

type CreateComputerInput = CallInput<'computers.create'>['body'];

/** Creates a computer and opens its live view. */
export function CreateComputerForm() {
  const api = useApi();
  const environments = useQuery(environmentsQuery(api));
  const create = useMutation({
    mutationFn: (body: CreateComputerInput) => api.call('computers.create', { body }),
    meta: { invalidates: [queryKeys.computers] },
  });
  const [kind, setKind] = useState<ComputerKind>('browser');
  const [width, setWidth] = useState(1280);
  const [height, setHeight] = useState(720);
  const [persistent, setPersistent] = useState(false);
  const [environmentId, setEnvironmentId] = useState('');
  const { busy, error, run } = useApiAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    return run(async () => {
      const computer = await create.mutateAsync({
        kind,
        display: { width, height },
        persistent,
        ...(environmentId && { environment_id: environmentId }),
      });
      location.hash = href.computer(computer.id);
    });
  };
  const saved = (environments.data ?? []).filter((environment) => environment.kind === kind);

  return (
    <form
      className="panel form-row"
      onSubmit={(event) => void submit(event)}
      aria-label="New computer"
    >
      <label>
        Kind
        <select value={kind} onChange={(event) => setKind(event.target.value as ComputerKind)}>
          <option value="browser">browser</option>
          <option value="desktop">desktop</option>
        </select>
      </label>
      <label>
        Width
        <input
          type="number"
          min={64}
          max={7680}
          value={width}
          onChange={(event) => setWidth(event.target.valueAsNumber)}
        />
      </label>
      <label>
        Height
        <input
          type="number"
          min={64}
          max={4320}
          value={height}
          onChange={(event) => setHeight(event.target.valueAsNumber)}
        />
      </label>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={persistent}
          onChange={(event) => setPersistent(event.target.checked)}
        />
        Persistent
      </label>
      <label>
        Restore environment
        <select value={environmentId} onChange={(event) => setEnvironmentId(event.target.value)}>
          <option value="">none (fresh)</option>
          {saved.map((environment) => (
            <option key={environment.id} value={environment.id}>
              {environment.id} · saved {new Date(environment.updated_at).toLocaleString()}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Create computer {busy && <Spinner label="creating the computer" />}
      </button>
      <ErrorText message={error ?? firstError(environments.error)} />
    </form>
  );
}
