import type { ComputerKind } from '../../../shared/computers.js';
import { describeModelAction } from '../../../shared/describe-action.js';
import type { OutputAction } from '../../../shared/responses.js';
import type { ScriptLanguage, StepCheck } from '../../../shared/task-scripts.js';
import type { Task } from '../../../shared/tasks.js';
import { BRIGHTNESS_TOLERANCE, HASH_TOLERANCE, REGION } from './step-check.js';
import { SETTLE_MS, type RecordedStep } from './task-replay.js';
import { PYTHON_HELPERS, TYPESCRIPT_HELPERS } from './task-script-helpers.js';

/**
 * A task's performed actions as a script against the official Lightcone SDK (docs/API.md §18):
 * one call per action, each after a check that the screen is where the run was. Typed text is
 * written as the task's events hold it, so a secret stays a `{{secret:NAME}}` placeholder.
 */
export function taskScript(input: {
  task: Task;
  steps: readonly RecordedStep[];
  kind: ComputerKind;
  /** The display the task ran on: coordinates are its pixels. */
  display: { width: number; height: number } | undefined;
  lang: ScriptLanguage;
}): string {
  return input.lang === 'python' ? python(input) : typescript(input);
}

type Input = Parameters<typeof taskScript>[0];

/**
 * Text as one line of a comment: a line break in typed text or an instruction would end the
 * comment and put the rest into the script as code.
 */
const oneLine = (text: string) => text.replace(/[\r\n\u2028\u2029\u0085]+/g, ' ');

const LIMITS = {
  region: REGION,
  tolerance: HASH_TOLERANCE,
  brightness: BRIGHTNESS_TOLERANCE,
  settleMs: SETTLE_MS,
};

/** A value as a literal of the language (JSON's spelling of strings is valid in both). */
function literal(value: unknown, lang: ScriptLanguage): string {
  if (value === null || value === undefined) return lang === 'python' ? 'None' : 'null';
  if (typeof value === 'boolean')
    return lang === 'python' ? (value ? 'True' : 'False') : String(value);
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => literal(item, lang)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(
    ([, v]) => v !== undefined,
  );
  const key = (name: string) => (lang === 'python' ? JSON.stringify(name) : name);
  return `{ ${entries.map(([name, v]) => `${key(name)}: ${literal(v, lang)}`).join(', ')} }`;
}

/** An SDK call for the action: a method of its own where the SDK has one, else execute. */
function call(
  action: OutputAction,
  lang: ScriptLanguage,
): { method: string; args: Record<string, unknown> } {
  const point = { x: action.x, y: action.y };
  const py = lang === 'python';
  switch (action.type) {
    case 'click':
      if (!action.button || action.button === 'left') return { method: 'click', args: point };
      break;
    case 'double_click':
      return { method: py ? 'double_click' : 'doubleClick', args: point };
    case 'right_click':
      return { method: py ? 'right_click' : 'rightClick', args: point };
    case 'type':
      return { method: 'type', args: { text: action.text ?? '' } };
    case 'key':
    case 'keypress':
      return {
        method: 'hotkey',
        args: { keys: action.keys ?? (action.text ? [action.text] : []) },
      };
    case 'navigate':
      return { method: 'navigate', args: { url: action.url ?? '' } };
    case 'scroll':
      return {
        method: 'scroll',
        args: { ...point, dx: action.scroll_x ?? 0, dy: action.scroll_y ?? 0 },
      };
  }
  return { method: 'execute', args: { action } };
}

/** What is checked before a step (the page's URL, the text under the point, the region's hash). */
function checkArgs(check: StepCheck | undefined, action: OutputAction): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  if (check?.url) args.url = check.url;
  const text = check?.target?.name?.trim();
  if (text) args.text = text;
  if (check?.region_hash && action.x !== undefined && action.y !== undefined) {
    Object.assign(args, { region_hash: check.region_hash, x: action.x, y: action.y });
  }
  return args;
}

function header(input: Input, comment: string): string[] {
  const { task, steps } = input;
  return [
    `${comment} Replays Benchtop task ${task.task_id} without a model: ${steps.length} step(s).`,
    `${comment} Instruction: ${oneLine(task.instruction).slice(0, 200)}`,
    `${comment} Point the official Lightcone SDK at Benchtop: LIGHTCONE_BASE_URL=http://127.0.0.1:4422`,
    `${comment} TZAFON_API_KEY=<a Benchtop key>. Before each step it checks that the screen is where`,
    `${comment} the run was (the page URL, the text under the point, the look of the pixels around`,
    `${comment} it) and stops naming the step when it is not. Text typed from the vault stays a`,
    `${comment} {{secret:NAME}} placeholder: Benchtop types the value.`,
  ];
}

/** The arguments that create a computer like the task's. */
function created(input: Input, lang: ScriptLanguage): string {
  const display = input.display && { ...input.display, scale: 1 };
  if (lang === 'typescript') return literal({ kind: input.kind, display }, lang);
  const args = [`kind=${literal(input.kind, lang)}`];
  if (display) args.push(`display=${literal(display, lang)}`);
  return args.join(', ');
}

function python(input: Input): string {
  const { steps } = input;
  const lines = [
    ...header(input, '#'),
    ...PYTHON_HELPERS(LIMITS).split('\n'),
    '',
    'def main():',
    '    # COMPUTER_ID: replay on that running computer (kept) instead of a new one (deleted after).',
    '    given = os.environ.get("COMPUTER_ID")',
    `    computer_id = given or client.computers.create(${created(input, 'python')}).id`,
    '    try:',
  ];
  for (const [index, { action, check }] of steps.entries()) {
    const step = index + 1;
    const name = `step ${step} (${describeModelAction(action)})`;
    const { method, args } = call(action, 'python');
    const kwargs = (values: Record<string, unknown>) =>
      Object.entries(values).map(([key, value]) => `${key}=${literal(value, 'python')}`);
    const checked = kwargs(checkArgs(check, action));
    lines.push(`        # ${oneLine(name)}`);
    if (checked.length > 0) {
      lines.push(`        check(computer_id, ${[literal(name, 'python'), ...checked].join(', ')})`);
    }
    lines.push(
      `        done(${literal(name, 'python')}, client.computers.${method}(${['computer_id', ...kwargs(args)].join(', ')}))`,
    );
  }
  if (steps.length === 0) lines.push('        pass');
  lines.push(
    '    finally:',
    '        if not given:',
    '            client.computers.delete(computer_id)',
    `    print(${literal(`replayed ${steps.length} step(s)`, 'python')})`,
    '',
    '',
    'if __name__ == "__main__":',
    '    main()',
    '',
  );
  return lines.join('\n');
}

function typescript(input: Input): string {
  const { steps } = input;
  const lines = [
    ...header(input, '//'),
    ...TYPESCRIPT_HELPERS(LIMITS).split('\n'),
    '',
    'async function main(): Promise<void> {',
    '  // COMPUTER_ID: replay on that running computer (kept) instead of a new one (deleted after).',
    '  const given = process.env.COMPUTER_ID;',
    `  const computerId = given || (await client.computers.create(${created(input, 'typescript')})).id;`,
    '  try {',
  ];
  for (const [index, { action, check }] of steps.entries()) {
    const step = index + 1;
    const name = `step ${step} (${describeModelAction(action)})`;
    const { method, args } = call(action, 'typescript');
    const checked = checkArgs(check, action);
    lines.push(`    // ${oneLine(name)}`);
    if (Object.keys(checked).length > 0) {
      lines.push(
        `    await check(computerId, ${literal(name, 'typescript')}, ${literal(checked, 'typescript')});`,
      );
    }
    lines.push(
      `    done(${literal(name, 'typescript')}, await client.computers.${method}(computerId, ${literal(args, 'typescript')}));`,
    );
  }
  lines.push(
    '  } finally {',
    '    if (!given) await client.computers.delete(computerId);',
    '  }',
    `  console.log(${literal(`replayed ${steps.length} step(s)`, 'typescript')});`,
    '}',
    '',
    'main().catch((error: unknown) => {',
    '  console.error(error instanceof Error ? error.message : error);',
    '  process.exit(1);',
    '});',
    '',
  );
  return lines.join('\n');
}
