import { useQueryClient } from '@tanstack/react-query';
import type { ScriptLanguage } from '../../../shared/task-scripts.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { queryKeys } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { href } from '../hooks/use-hash-route.js';
import { saveFile } from '../recordings/files.js';

type ErrorProps = { onError: (message: string | undefined) => void };

const EXTENSIONS: Record<ScriptLanguage, string> = { python: 'py', typescript: 'ts' };

/**
 * A finished task's runs as scripts (docs/API.md §18): replay it without the model (a step
 * whose screen moved is healed by one model call), or save it as a script for the SDK.
 */
export function ReplayControls({ task, onError }: { task: Task } & ErrorProps) {
  const api = useApi();
  const queryClient = useQueryClient();
  if (task.exit_code === null) return null;
  const replay = async () => {
    const started = await api.call('tasks.replay', {
      params: { id: task.task_id },
      body: { heal: true },
    });
    await queryClient.invalidateQueries({ queryKey: queryKeys.tasks });
    location.hash = href.task(started.task_id);
  };
  const save = async (lang: ScriptLanguage) => {
    const bytes = await api.call('tasks.script', {
      params: { id: task.task_id },
      query: { lang },
    });
    saveFile(bytes, `${task.task_id}.${EXTENSIONS[lang]}`, 'text/plain');
  };
  return (
    <>
      <AsyncButton
        onClick={replay}
        onError={onError}
        title="Repeat the task's actions without the model; a step whose screen moved is healed with one model call"
      >
        Replay
      </AsyncButton>
      <AsyncButton className="secondary" onClick={() => save('python')} onError={onError}>
        Python script
      </AsyncButton>
      <AsyncButton className="secondary" onClick={() => save('typescript')} onError={onError}>
        TypeScript script
      </AsyncButton>
    </>
  );
}
