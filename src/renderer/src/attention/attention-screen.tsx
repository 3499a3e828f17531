import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import type { Approval, AttentionItem } from '../../../shared/approvals.js';
import { attentionKey } from '../../../shared/describe-attention.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { attentionQuery, computersQuery, pendingApprovalsQuery } from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { ApprovalCard, decisionText } from './approval-card.js';
import { ComputerGrid } from './computer-grid.js';
import { TaskItemCard } from './task-item-card.js';
import { useNotificationPermission } from './use-attention-notifications.js';

/** How many of the person's last decisions stay on screen. */
const DECISIONS_SHOWN = 5;

/** What waits for a person, oldest first, beside a live thumbnail of every running computer. */
export function AttentionScreen() {
  const api = useApi();
  const attention = useQuery(attentionQuery(api));
  const approvals = useQuery(pendingApprovalsQuery(api));
  const computers = useQuery(computersQuery(api));
  const [decisions, setDecisions] = useState<Approval[]>([]);
  const byId = useMemo(
    () => new Map((approvals.data ?? []).map((approval) => [approval.id, approval])),
    [approvals.data],
  );
  const waiting = useMemo(
    () => new Set((attention.data ?? []).flatMap((item) => item.computer_id ?? [])),
    [attention.data],
  );
  const onDecided = (answer: Approval) =>
    setDecisions((previous) => [answer, ...previous].slice(0, DECISIONS_SHOWN));

  return (
    <section aria-labelledby="attention-title" className="attention-screen">
      <header className="screen-head">
        <h1 id="attention-title">Needs you</h1>
        <span className="head-actions">
          <NotificationSwitch />
        </span>
      </header>
      <div className="attention-layout">
        <div className="attention-queue">
          <h2>
            Waiting {attention.data && <span className="count">{attention.data.length}</span>}
          </h2>
          <ErrorText message={firstError(attention.error, approvals.error)} />
          {decisions.length > 0 && (
            <ul className="decisions" aria-label="Your last decisions">
              {decisions.map((answer, index) => (
                <li key={index} role="status" className={`decision decision-${answer.status}`}>
                  {decisionText(answer)}
                </li>
              ))}
            </ul>
          )}
          {attention.data === undefined ? (
            !attention.error && <Spinner label="loading what waits" />
          ) : attention.data.length === 0 ? (
            <p className="muted">Nothing waits for you.</p>
          ) : (
            <ol className="attention-list" aria-label="Waiting for you, oldest first">
              {attention.data.map((item) => (
                <li key={attentionKey(item)}>
                  <Item item={item} approvals={byId} onDecided={onDecided} />
                </li>
              ))}
            </ol>
          )}
        </div>
        <div className="attention-computers">
          <h2>Running computers</h2>
          <ErrorText message={firstError(computers.error)} />
          {computers.data === undefined ? (
            !computers.error && <Spinner label="loading computers" />
          ) : (
            <ComputerGrid computers={computers.data} waiting={waiting} />
          )}
        </div>
      </div>
    </section>
  );
}

type ItemProps = {
  item: AttentionItem;
  approvals: Map<string, Approval>;
  onDecided: (answer: Approval) => void;
};

function Item({ item, approvals, onDecided }: ItemProps) {
  if (item.type === 'approval' && item.approval_id) {
    return (
      <ApprovalCard item={item} approval={approvals.get(item.approval_id)} onDecided={onDecided} />
    );
  }
  return <TaskItemCard item={item} />;
}

/** Browser notifications are asked for from a person's click, never on load. */
function NotificationSwitch() {
  const { supported, permission, ask } = useNotificationPermission();
  if (!supported) return null;
  if (permission === 'granted') return <span className="muted">Notifications on</span>;
  if (permission === 'denied')
    return <span className="muted">Notifications are blocked for this page</span>;
  return (
    <button type="button" className="secondary" onClick={() => void ask()}>
      Notify me
    </button>
  );
}
