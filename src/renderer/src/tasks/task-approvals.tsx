import { useState } from 'react';
import type { Approval } from '../../../shared/approvals.js';
import { ApprovalCard, decisionText } from '../attention/approval-card.js';
import { useHeldApprovals } from '../attention/use-task-attention.js';
import { ErrorText } from '../components/feedback.js';

/**
 * The task's actions held for a person, decided here as on the Needs-you screen: a person
 * watching the task is asked where they look, and the last decision stays in words.
 */
export function TaskApprovals({ taskId }: { taskId: string }) {
  const { held, error } = useHeldApprovals({ taskId });
  const [decided, setDecided] = useState<Approval>();
  if (held.length === 0 && !decided) return null;
  return (
    <div className="task-approvals">
      {decided && (
        <p role="status" className={`decision decision-${decided.status}`}>
          {decisionText(decided)}
        </p>
      )}
      <ErrorText message={error} />
      {held.map(({ item, approval }) => (
        <ApprovalCard
          key={item.approval_id}
          item={item}
          approval={approval}
          onDecided={setDecided}
        />
      ))}
    </div>
  );
}
