import { useState, type ReactNode } from 'react';
import { describeAsked } from '../../../shared/describe-attention.js';
import type { PausedReason, Task } from '../../../shared/tasks.js';
import {
  type Held,
  useDecision,
  useHeldApprovals,
  usePausedWhy,
} from '../attention/use-task-attention.js';
import { AsyncButton } from '../components/async-button.js';
import { RaiseBudget } from '../tasks/raise-budget.js';
import { ErrorText } from '../components/feedback.js';
import { href } from '../hooks/use-hash-route.js';
import type { Driver } from './use-driver.js';

type Props = {
  driver: Driver;
  onTakeOver: () => Promise<void>;
  /** Resumes the task; the person stops driving. */
  onHandBack: () => Promise<void>;
  /** The person stops driving (the task went on by their decision or raise). */
  onRelease: () => void;
};

/**
 * The marker saying who drives this computer right now (an agent, a paused agent, the person
 * here, nobody), with the way to change it.
 */
export function DriverBanner({ driver, onTakeOver, onHandBack, onRelease }: Props) {
  const [error, setError] = useState<string>();
  const taskLink = (id: string) => <a href={href.task(id)}>{id}</a>;
  const instruction = (task: Task) => (
    <span className="driver-instruction" title={task.instruction}>
      <span className="muted">Instruction:</span> {task.instruction}
    </span>
  );
  let body;
  if (driver.who === 'agent') {
    body = (
      <>
        <strong>Agent task {taskLink(driver.task.task_id)} is driving.</strong>
        <span>Clicking or typing on the view takes over and pauses it.</span>
        <AsyncButton onClick={onTakeOver} onError={setError}>
          Take over
        </AsyncButton>
        {instruction(driver.task)}
      </>
    );
  } else if (driver.who === 'paused' && waitsOn(driver.task) === 'approval') {
    // Resuming cannot skip a held action: the person decides it here, the live view below.
    body = (
      <>
        <TaskHeldAction
          task={driver.task}
          link={taskLink(driver.task.task_id)}
          onError={setError}
        />
        {instruction(driver.task)}
      </>
    );
  } else if (driver.who === 'paused') {
    const reason = driver.task.paused_reason;
    body = (
      <>
        <PausedTitle task={driver.task} link={taskLink(driver.task.task_id)} />
        {reason === 'budget' ? (
          <RaiseBudget task={driver.task} onResumed={onRelease} />
        ) : (
          <AsyncButton onClick={onHandBack} onError={setError}>
            Resume it
          </AsyncButton>
        )}
        {instruction(driver.task)}
      </>
    );
  } else if (driver.who === 'person') {
    body = (
      <>
        <strong>You are driving.</strong>
        {/* From the first action on, while the pause it asks for is on its way: the banner
            keeps the agent's rows, and the view stays where it is. */}
        {driver.task && (
          <>
            {/* Handing back cannot skip what the task waits on: decided or raised here. */}
            {waitsOn(driver.task) === 'approval' ? (
              <TaskHeldAction
                task={driver.task}
                link={taskLink(driver.task.task_id)}
                onError={setError}
              />
            ) : waitsOn(driver.task) === 'budget' ? (
              <RaiseBudget task={driver.task} onResumed={onRelease} />
            ) : (
              <AsyncButton onClick={onHandBack} onError={setError}>
                Hand back to {driver.task.task_id}
              </AsyncButton>
            )}
            {instruction(driver.task)}
          </>
        )}
      </>
    );
  } else if (driver.who === 'nobody') {
    // Always there, the same height as the person's: their first action changes its words
    // instead of pushing the screen down under the pointer.
    body = (
      <>
        <strong>Nobody is driving.</strong>
        <span className="muted">Clicking or typing on the view drives this computer.</span>
      </>
    );
  } else {
    body = <span className="muted">Finding out who drives…</span>;
  }
  return (
    <div className={`driver driver-${driver.who}`} aria-live="polite">
      {body}
      <ErrorText message={error} />
    </div>
  );
}

/** "Agent task … is paused: why", or "… is paused by who" for a pause someone asked for. */
function PausedTitle({ task, link }: { task: Task; link: ReactNode }) {
  const why = usePausedWhy(task);
  const user = task.paused_reason === 'user';
  return (
    <strong>
      Agent task {link} is paused
      {user ? (task.paused_by ? ` by ${task.paused_by}` : '') : why ? `: ${why}` : ''}.
    </strong>
  );
}

/** Why a paused task is paused; undefined for one that runs. */
function waitsOn(task: Task): PausedReason | undefined {
  return task.status === 'paused' ? (task.paused_reason ?? undefined) : undefined;
}

/** The action a paused task waits on a person's decision for, with Approve and Deny. */
function TaskHeldAction({
  task,
  link,
  onError,
}: {
  task: Task;
  link: ReactNode;
  onError: (message: string | undefined) => void;
}) {
  const first = useHeldApprovals({ taskId: task.task_id }).held[0];
  return (
    <HeldAction
      held={first}
      title={<strong>Agent task {link} waits for your approval.</strong>}
      onError={onError}
    />
  );
}

/**
 * What this computer's API and MCP clients sent that a policy holds (their requests wait): the
 * person watching the computer is asked here, as on the Needs-you screen, and told who asks.
 */
export function ClientHeldActions({ computerId }: { computerId: string }) {
  const { held, error } = useHeldApprovals({ clientsOf: computerId });
  const [decisionError, setDecisionError] = useState<string>();
  const first = held[0];
  // Shown once its approval is read: who asks is part of the question.
  if (!first?.approval) return null;
  const from = first.approval.requested_by ?? 'A client of this computer';
  return (
    <div className="driver driver-paused driver-held" aria-live="polite">
      <HeldAction
        held={first}
        title={<strong>{from} waits for your approval.</strong>}
        onError={setDecisionError}
      />
      {held.length > 1 && <a href={href.attention}>{held.length - 1} more waiting in Needs you</a>}
      <ErrorText message={decisionError ?? error} />
    </div>
  );
}

type HeldProps = {
  held: Held | undefined;
  title: ReactNode;
  onError: (message: string | undefined) => void;
};

/** A held action in words, with Approve and Deny. */
function HeldAction({ held, title, onError }: HeldProps) {
  const decide = useDecision(held?.item.approval_id ?? '');
  const approval = held?.approval;
  const what = approval ? describeAsked(approval) : held?.item.summary;
  return (
    <>
      {title}
      {held && (
        <>
          <AsyncButton onClick={() => decide({ verb: 'approve' })} onError={onError}>
            Approve
          </AsyncButton>
          <AsyncButton
            className="danger"
            onClick={() => decide({ verb: 'deny' })}
            onError={onError}
          >
            Deny
          </AsyncButton>
        </>
      )}
      {what && <span className="held-action">{what}</span>}
    </>
  );
}
