import { useState, type FormEvent } from 'react';
import type { Computer } from '../../../shared/computers.js';
import type { StartTaskBody } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { useApiAction } from '../hooks/use-api-action.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';
import { usePolling } from '../hooks/use-polling.js';

type ModelList = { data: Array<{ id: string; provider: string }> };
type Started = { task_id: string; computer_id: string };

/** Starts a task on a new browser or desktop, or on a computer that is already running. */
export function StartTaskForm() {
  const api = useApi();
  const models = usePolling(() => api.get<ModelList>('/v1/models'), 30_000);
  const computers = usePolling(() => api.get<Computer[]>('/computers'), 5000);
  const [instruction, setInstruction] = useState('');
  const [model, setModel] = useState('');
  const [target, setTarget] = useState('kind:browser');
  const [maxSteps, setMaxSteps] = useState(50);
  const { busy, error, run } = useApiAction();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const [how, value] = target.split(':') as ['kind' | 'computer', string];
    const body: Partial<StartTaskBody> = {
      instruction,
      max_steps: maxSteps,
      ...(model && { model }),
      ...(how === 'kind' ? { kind: value as 'browser' | 'desktop' } : { computer_id: value }),
    };
    return run(async () => {
      const started = await api.post<Started>('/agent/tasks', body);
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
      <ErrorText message={error ?? models.error} />
    </form>
  );
}
