import { groupTaskSteps, type TaskStep } from '../../../shared/task-steps.js';
import type { TaskEvent } from '../../../shared/tasks.js';
import { playingIndex, videoTime } from '../recordings/recorded-actions.js';
import { ActionShot } from './action-shot.js';
import { describeTaskEvent } from '../../../shared/describe-task-event.js';

type Step = TaskStep & {
  /** When it began (epoch ms): its first event. */
  at: number;
};

/** The task's steps (see groupTaskSteps), each with when it began. */
export function groupSteps(events: TaskEvent[]): Step[] {
  return groupTaskSteps(events).map((step) => ({
    ...step,
    at: Date.parse(step.events[0]!.timestamp),
  }));
}

type Props = {
  events: TaskEvent[];
  /** False once the screenshots are gone (their computer ended long ago, or Benchtop restarted). */
  showScreenshots: boolean;
  /** The recording's video beside the timeline: each step seeks it, the one playing is marked. */
  video?: TimelineVideo;
};

/** Where the video plays (ms from its start at `startedAt`, epoch ms), and a seek to an offset. */
export type TimelineVideo = {
  startedAt: number;
  positionMs: number | undefined;
  seek: (offsetMs: number) => void;
};

export function TaskTimeline({ events, showScreenshots, video }: Props) {
  if (events.length === 0) return <p className="muted">No step yet.</p>;
  const steps = groupSteps(events);
  const offsets = video ? steps.map((step) => Math.max(0, step.at - video.startedAt)) : [];
  const playing = video ? playingIndex(offsets, video.positionMs) : -1;
  // A run that looked at no screen (a replay repeats without looking) has no thumbnail column.
  const shots = steps.some((step) => step.screenshot);
  return (
    <ol className={shots ? 'timeline' : 'timeline timeline-no-shots'} aria-label="Steps">
      {steps.map((step, index) => (
        <li
          key={index}
          className={index === playing ? 'step step-playing' : 'step'}
          aria-current={index === playing ? 'step' : undefined}
          data-step={step.step}
        >
          {step.screenshot && showScreenshots ? (
            <ActionShot url={step.screenshot} actions={step.actions} step={step.step} />
          ) : step.screenshot ? (
            <div className="shot shot-empty">screenshot no longer kept</div>
          ) : (
            shots && <div aria-hidden="true" />
          )}
          <div className="step-text">
            <h3>
              {video ? (
                <button
                  type="button"
                  className="step-seek"
                  title="Show this step in the video"
                  onClick={() => video.seek(offsets[index]!)}
                >
                  {step.step > 0 ? `Step ${step.step}` : 'Start'}
                  <span className="mark-time">{videoTime(offsets[index]!)}</span>
                </button>
              ) : step.step > 0 ? (
                `Step ${step.step}`
              ) : (
                'Start'
              )}
            </h3>
            <ul>
              {step.events.map((event, n) => (
                <EventLine key={n} event={event} showScreenshot={showScreenshots} />
              ))}
            </ul>
          </div>
        </li>
      ))}
    </ol>
  );
}

function EventLine({ event, showScreenshot }: { event: TaskEvent; showScreenshot: boolean }) {
  const line = describeTaskEvent(event, 'window');
  if (!line) return null;
  const decided = event.type === 'approval_decided' ? ` event-${event.status}` : '';
  return (
    <li className={`event event-${event.type}${decided}`}>
      <span className="event-kind">{line.kind}</span> {line.text}
      {event.type === 'approval_required' && event.screenshot_url && showScreenshot && (
        <a
          className="event-shot"
          href={event.screenshot_url}
          target="_blank"
          rel="noreferrer"
          title="Open the screen the person was asked about"
        >
          <img src={event.screenshot_url} alt="The screen when approval was asked" loading="lazy" />
        </a>
      )}
    </li>
  );
}
