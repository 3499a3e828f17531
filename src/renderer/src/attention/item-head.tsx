import { useQuery } from '@tanstack/react-query';
import type { AttentionItem } from '../../../shared/approvals.js';
import { attentionHeading } from '../../../shared/describe-attention.js';
import { useApi } from '../api/api-context.js';
import { taskQuery } from '../api/queries.js';
import { age } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';

/**
 * An item's heading: what kind of wait, for how long, the task and computer it concerns, and
 * what the task was told to do (a person decides knowing what the agent is after).
 */
export function ItemHead({ item }: { item: AttentionItem }) {
  const now = useNow();
  return (
    <header className="attention-head">
      <h3>{attentionHeading(item)}</h3>
      <span className="muted" title={item.since}>
        waiting {age(item.since, now)}
      </span>
      <span className="attention-links">
        {item.task_id && <a href={href.task(item.task_id)}>{item.task_id}</a>}
        {item.computer_id && <a href={href.computer(item.computer_id)}>{item.computer_id}</a>}
      </span>
      {item.task_id && <Instruction taskId={item.task_id} />}
    </header>
  );
}

function Instruction({ taskId }: { taskId: string }) {
  // What a task was told never changes: read once.
  const task = useQuery({ ...taskQuery(useApi(), taskId), refetchInterval: false }).data;
  if (!task) return null;
  return (
    <p className="attention-instruction" title={task.instruction}>
      <span className="muted">Instruction:</span> {task.instruction}
    </p>
  );
}
