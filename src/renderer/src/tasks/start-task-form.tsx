import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { CallInput } from '../../../shared/client/api-client.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { computersQuery, modelsQuery, queryKeys } from '../api/queries.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';

type StartTaskInput = CallInput<'tasks.start'>['body'];

/** Starts a task on a new browser or desktop, or on a computer that is already running. */
export function StartTaskForm() {
  const api = useApi();
  const models = useQuery(modelsQuery(api));
  const computers = useQuery({ ...computersQuery(api), refetchInterval: 5000 });
  // A task on a new computer creates it.
  const start = useMutation({
    mutationFn: (body: StartTaskInput) => api.call('tasks.start', { body }),
    meta: { invalidates: [queryKeys.tasks, queryKeys.computers] },
  });
  const [instruction, setInstruction] = useState('');
  const [model, setModel] = useState('');
  const [target, setTarget] = useState('kind:browser');
  const [maxSteps, setMaxSteps] = useState(50);
  const { busy, error, run } = useApiAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const [how, value] = target.split(':') as ['kind' | 'computer', string];
    const body: StartTaskInput = {
      instruction,
      max_steps: maxSteps,
      ...(model && { model }),
      ...(how === 'kind' ? { kind: value as 'browser' | 'desktop' } : { computer_id: value }),
    };
    return run(async () => {
      const started = await start.mutateAsync(body);
      location.hash = href.task(started.task_id);
    });
  };

  return (
    <form
      className="panel start-task"
      onSubmit={(event) => void submit(event)}
      aria-label="New task"
    >
      <label className="wide">
        Instruction
        <textarea
          required
          rows={3}
          value={instruction}
          onChange={(event) => setInstruction(event.target.value)}
          placeholder="Find the cheapest flight from Lisbon to Oslo next Friday"
        />
      </label>
      <div className="form-row">
        <label>
          Model
          <select value={model} onChange={(event) => setModel(event.target.value)}>
            <option value="">the default model</option>
            {models.data?.data.map((entry) => (
              <option key={entry.id} value={entry.id}>
                {entry.id} ({entry.provider})
              </option>
            ))}
          </select>
        </label>
        <label>
          Computer
          <select value={target} onChange={(event) => setTarget(event.target.value)}>
            <option value="kind:browser">a new browser</option>
            <option value="kind:desktop">a new desktop</option>
            {computers.data?.map((computer) => (
              <option key={computer.id} value={`computer:${computer.id}`}>
                {computer.id} ({computer.kind})
              </option>
            ))}
          </select>
        </label>
        <label>
          Max steps
          <input
            type="number"
            min={1}
            max={500}
            value={maxSteps}
            onChange={(event) => setMaxSteps(event.target.valueAsNumber)}
          />
        </label>
        <button type="submit" disabled={busy || !instruction.trim()}>
          Start task {busy && <Spinner label="starting the task" />}
        </button>
      </div>
      <ErrorText message={error ?? firstError(models.error)} />
    </form>
  );
}
