import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { Approval } from '../../../shared/approvals.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { attentionQuery, pendingApprovalsQuery } from '../api/queries.js';
import { ApprovalCard, decisionText } from '../attention/approval-card.js';
import { ErrorText } from '../components/feedback.js';

/**
 * The task's actions held for a person, decided here as on the Needs-you screen: a person
 * watching the task is asked where they look, and the last decision stays in words.
 */
export function TaskApprovals({ taskId }: { taskId: string }) {
  const api = useApi();
  const attention = useQuery(attentionQuery(api));
  const held = (attention.data ?? []).filter(
    (item) => item.type === 'approval' && item.task_id === taskId && item.approval_id,
  );
  const approvals = useQuery({ ...pendingApprovalsQuery(api), enabled: held.length > 0 });
  const [decided, setDecided] = useState<Approval>();
  if (held.length === 0 && !decided) return null;
  return (
    <div className="task-approvals">
      {decided && (
        <p role="status" className={`decision decision-${decided.status}`}>
          {decisionText(decided)}
        </p>
      )}
      <ErrorText message={firstError(approvals.error)} />
      {held.map((item) => (
        <ApprovalCard
          key={item.approval_id}
          item={item}
          approval={approvals.data?.find((approval) => approval.id === item.approval_id)}
          onDecided={setDecided}
        />
      ))}
    </div>
  );
}
