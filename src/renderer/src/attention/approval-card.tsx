import { useState } from 'react';
import type { Approval, AttentionItem } from '../../../shared/approvals.js';
import { describeHeldAction, describeTarget } from '../../../shared/describe-attention.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { ItemHead } from './item-head.js';
import { useDecision } from './use-task-attention.js';

type Props = {
  item: AttentionItem;
  /** The pending approval the item stands for; undefined until the list of approvals has it. */
  approval: Approval | undefined;
  /** The server's answer to a decision, for the screen to show after the item leaves the queue. */
  onDecided: (answer: Approval) => void;
};

/** A held action: what it would do and where, the screen when it was asked, Approve or Deny. */
export function ApprovalCard({ item, approval, onDecided }: Props) {
  const [note, setNote] = useState('');
  const [error, setError] = useState<string>();
  const decide = useDecision(item.approval_id!, onDecided);
  const label = approval ? describeHeldAction(approval.action) : item.summary;

  return (
    <article className="attention-item attention-approval" aria-label={`Approve ${label}?`}>
      <ItemHead item={item} />
      {!approval ? (
        <p>
          <Spinner label="loading the approval" /> {item.summary}
        </p>
      ) : (
        <div className="approval-body">
          <ApprovalShot approval={approval} />
          <div className="approval-facts">
            <dl>
              <dt>Action</dt>
              <dd className="approval-action">{label}</dd>
              {approval.requested_by && (
                <>
                  <dt>From</dt>
                  <dd>{approval.requested_by}</dd>
                </>
              )}
              <dt>Why</dt>
              <dd>
                {approval.reason}{' '}
                {!approval.reason.startsWith(`policy ${approval.policy_id} `) && (
                  <span className="muted">(policy {approval.policy_id})</span>
                )}
              </dd>
              {approval.url && (
                <>
                  <dt>Page</dt>
                  <dd className="approval-url">{approval.url}</dd>
                </>
              )}
              {approval.target && (
                <>
                  <dt>Target</dt>
                  <dd>{describeTarget(approval.target)}</dd>
                </>
              )}
            </dl>
            <label>
              Note (the caller reads it with a denial)
              <input
                type="text"
                value={note}
                maxLength={2000}
                onChange={(event) => setNote(event.target.value)}
              />
            </label>
            <div className="controls">
              <AsyncButton onClick={() => decide({ verb: 'approve', note })} onError={setError}>
                Approve
              </AsyncButton>
              <AsyncButton
                className="danger"
                onClick={() => decide({ verb: 'deny', note })}
                onError={setError}
              >
                Deny
              </AsyncButton>
            </div>
            <ErrorText message={error} />
          </div>
        </div>
      )}
    </article>
  );
}

function ApprovalShot({ approval }: { approval: Approval }) {
  const [gone, setGone] = useState(false);
  if (!approval.screenshot_url || gone)
    return <div className="shot shot-empty">no screenshot of this screen</div>;
  return (
    <a
      className="shot"
      href={approval.screenshot_url}
      target="_blank"
      rel="noreferrer"
      title="Open the screenshot"
    >
      <img
        src={approval.screenshot_url}
        alt={`The screen when ${approval.computer_id} asked, the target marked`}
        onError={() => setGone(true)}
      />
    </a>
  );
}

/**
 * What a decision came to, in words: an expired approval says why (what changed, and that it is
 * asked again; or that its request left and no retry of it came).
 */
export function decisionText(answer: Approval): string {
  const action = describeHeldAction(answer.action);
  switch (answer.status) {
    case 'approved':
      return `Approved: ${action} on ${answer.computer_id} ran.`;
    case 'denied':
      return `Denied: ${action} on ${answer.computer_id}${answer.note ? ` (“${answer.note}”)` : ''}.`;
    case 'expired': {
      const why = answer.status_reason ?? 'it expired';
      // What it acts on changed: the action is asked about again as a new approval.
      const again = /^the (tab|page|target) changed/.test(why) ? ' Asked again.' : '';
      return `Not run: ${action} on ${answer.computer_id}: ${why}.${again}`;
    }
    default:
      return `${action} on ${answer.computer_id} is still waiting.`;
  }
}
