import type { OutputAction } from './responses.js';
import type { TaskEvent } from './tasks.js';

/**
 * A step of a task's timeline: the events from where it opened to where the next one opens, and
 * the actions among them.
 */
export type TaskStep = {
  step: number;
  screenshot?: string;
  actions: OutputAction[];
  events: TaskEvent[];
};

/**
 * Events in the order they happened, cut into steps: each screenshot opens a step holding what the
 * model thought, said and did about it, and so does the first event of a later step (a replay
 * looks at the screen only for a step it heals). Pauses and messages from a person land in the
 * step during which they happened. The window's timeline and the offline bundle's both read this.
 */
export function groupTaskSteps(events: TaskEvent[]): TaskStep[] {
  const steps: TaskStep[] = [];
  for (const event of events) {
    let step = steps.at(-1);
    if (!step || opensStep(step, event)) {
      step = { step: event.step, actions: [], events: [] };
      steps.push(step);
    }
    if (event.type === 'screenshot') step.screenshot = event.screenshot_url;
    else if (event.type === 'action') step.actions.push(event.action);
    step.events.push(event);
  }
  return steps;
}

/** A later step's first event, or a look at the screen after the current step's own. */
function opensStep(current: TaskStep, event: TaskEvent): boolean {
  if (event.step > current.step) return true;
  return event.type === 'screenshot' && current.screenshot !== undefined;
}
