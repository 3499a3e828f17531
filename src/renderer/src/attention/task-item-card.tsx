import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { AttentionItem } from '../../../shared/approvals.js';
import { useApi } from '../api/api-context.js';
import { queryKeys, taskQuery } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';
import { RaiseBudget } from '../tasks/raise-budget.js';
import { ItemHead } from './item-head.js';

/**
 * A task that waits for a person: handed off, stuck, out of budget (Resume), or failed (a link,
 * and Dismiss once seen).
 */
export function TaskItemCard({ item }: { item: AttentionItem }) {
  return (
    <article className={`attention-item attention-${item.type}`} aria-label={item.summary}>
      <ItemHead item={item} />
      <p className="attention-summary">{item.summary}</p>
      {item.task_id && item.type === 'failed' && <FailedControls taskId={item.task_id} />}
      {item.task_id && item.type !== 'failed' && (
        <ResumeControls taskId={item.task_id} raiseBudget={item.type === 'budget'} />
      )}
    </article>
  );
}

function FailedControls({ taskId }: { taskId: string }) {
  const api = useApi();
  const [error, setError] = useState<string>();
  const dismiss = useMutation({
    mutationFn: () => api.call('attention.dismiss', { body: { task_id: taskId } }),
    meta: { invalidates: [queryKeys.attention] },
  });
  return (
    <div className="controls">
      <a href={href.task(taskId)}>Open the task</a>
      <AsyncButton
        className="secondary"
        aria-label={`Dismiss ${taskId}`}
        onClick={() => dismiss.mutateAsync()}
        onError={setError}
      >
        Dismiss
      </AsyncButton>
      <ErrorText message={error} />
    </div>
  );
}

function ResumeControls({ taskId, raiseBudget }: { taskId: string; raiseBudget: boolean }) {
  const api = useApi();
  const task = useQuery({ ...taskQuery(api, taskId), enabled: raiseBudget });
  const [error, setError] = useState<string>();
  const resume = useMutation({
    mutationFn: () => api.call('tasks.resume', { params: { id: taskId } }),
    meta: { invalidates: [queryKeys.attention, queryKeys.tasks] },
  });
  if (raiseBudget && task.data) {
    return (
      <div className="controls">
        <RaiseBudget task={task.data} />
        <a href={href.task(taskId)}>Open the task</a>
      </div>
    );
  }
  return (
    <div className="controls">
      <AsyncButton onClick={() => resume.mutateAsync()} onError={setError}>
        Resume
      </AsyncButton>
      <a href={href.task(taskId)}>Open the task</a>
      <ErrorText message={error} />
    </div>
  );
}
