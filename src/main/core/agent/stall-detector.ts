import type { StallKind } from '../../../shared/tasks.js';

export type Stall = { reason: StallKind; detail: string };

/** One step as the detector sees it: what the model did, and the screen it led to. */
type Seen = { action: string | null; screen: string };

/** Steps in a row that make a stall: three actions, or four screens of an A, B, A, B swing. */
const ACTIONS_IN_A_ROW = 3;
const SWING_SCREENS = 4;

/**
 * Tells when a task goes round in circles (docs/API.md §14): three actions in a row that change
 * nothing on screen, the same action three times in a row, or two screens taking turns for four
 * steps. It sees one screen per step (a hash of its image), each with the actions that led to it.
 */
export class StallDetector {
  private window: Seen[] = [];

  /**
   * Adds a step: `screen` is the screen now, `action` the step's actions as one text (null for
   * the first screen, or a step that sent no action). Returns the stall it completes, if any.
   */
  observe(screen: string, action: string | null): Stall | null {
    this.window.push({ action, screen });
    if (this.window.length > SWING_SCREENS) this.window.shift();
    return this.unchanged() ?? this.repeating() ?? this.swinging();
  }

  /** Forgets every step: what came before a person stepped in says nothing about what follows. */
  reset(): void {
    this.window = [];
  }

  /** The last `count` steps, when each of them sent an action. */
  private lastActions(count: number): Seen[] | null {
    const last = this.window.slice(-count);
    return last.length === count && last.every((seen) => seen.action !== null) ? last : null;
  }

  private unchanged(): Stall | null {
    const last = this.lastActions(ACTIONS_IN_A_ROW);
    const before = this.window.at(-ACTIONS_IN_A_ROW - 1);
    if (!last || !before || last.some((seen) => seen.screen !== before.screen)) return null;
    return {
      reason: 'no_change',
      detail: `the last ${ACTIONS_IN_A_ROW} actions changed nothing on screen`,
    };
  }

  private repeating(): Stall | null {
    const last = this.lastActions(ACTIONS_IN_A_ROW);
    if (!last || last.some((seen) => seen.action !== last[0]!.action)) return null;
    return {
      reason: 'repeating',
      detail: `the same action ${ACTIONS_IN_A_ROW} times in a row: ${last[0]!.action}`,
    };
  }

  private swinging(): Stall | null {
    if (this.window.length < SWING_SCREENS || !this.lastActions(SWING_SCREENS - 1)) return null;
    const [a, b, c, d] = this.window.map((seen) => seen.screen);
    if (a === b || a !== c || b !== d) return null;
    return {
      reason: 'oscillating',
      detail: `the screen went back and forth between two states for ${SWING_SCREENS} steps`,
    };
  }
}

/** An action as the detector compares it: the same fields in any order read the same. */
export function actionKey(actions: readonly object[]): string | null {
  if (actions.length === 0) return null;
  return actions.map((action) => JSON.stringify(sortKeys(action))).join(' then ');
}

function sortKeys(value: object): object {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)));
}
