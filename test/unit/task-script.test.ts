import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskScript } from '../../src/main/core/agent/task-script.js';
import type { RecordedStep } from '../../src/main/core/agent/task-replay.js';
import { unstartedTaskFields, type Task } from '../../src/shared/tasks.js';

const task: Task = {
  task_id: 'task_script',
  status: 'completed',
  exit_code: 0,
  computer_id: 'comp_x',
  instruction: 'Fill the form\nimport shutil; shutil.rmtree("/")',
  model: 'm',
  steps: 4,
  max_steps: 50,
  created_at: '2026-11-26T00:00:00.000Z',
  updated_at: '2026-11-26T00:00:00.000Z',
  result: null,
  error: null,
  ...unstartedTaskFields(),
};
const page = 'http://127.0.0.1:1/form';
const steps: RecordedStep[] = [
  { action: { type: 'navigate', url: page }, check: undefined },
  {
    action: { type: 'click', x: 150, y: 95, button: 'left' },
    check: {
      url: page,
      target: { role: 'textbox', name: 'Email', tag: 'input', input_type: 'text' },
      region_hash: '00ff00ff00ff00ffee',
    },
  },
  {
    action: { type: 'type', text: '"\'\n// import evil\r{{secret:PW}}\u2028x' },
    check: { url: page, target: null, region_hash: null },
  },
  { action: { type: 'drag', x: 1, y: 2, end_x: 3, end_y: 4 }, check: undefined },
];

describe('exported scripts', () => {
  it('keep typed text and instructions inside their literals and comments: nothing becomes code', () => {
    for (const lang of ['python', 'typescript'] as const) {
      const script = taskScript({ task, steps, kind: 'browser', display: undefined, lang });
      const lines = script.split(/\r\n|\r|\n|\u2028|\u2029/);
      expect(lines.filter((line) => /^\s*(import shutil|\/\/ import evil)/.test(line))).toEqual([]);
      expect(script).toContain('{{secret:PW}}');
    }
  });

  it('is a Python program that compiles, with each step checked before its call', () => {
    const script = taskScript({ task, steps, kind: 'browser', display: undefined, lang: 'python' });
    const file = join(mkdtempSync(join(tmpdir(), 'benchtop-script-unit-')), 'replay.py');
    writeFileSync(file, script);
    execFileSync('python3', ['-m', 'py_compile', file]);
    expect(script).toContain(
      'check(computer_id, "step 2 (click at 150, 95)", url="http://127.0.0.1:1/form", text="Email", region_hash="00ff00ff00ff00ffee", x=150, y=95)\n        done("step 2 (click at 150, 95)", client.computers.click(computer_id, x=150, y=95))',
    );
    expect(script).toContain(
      'client.computers.execute(computer_id, action={ "type": "drag", "x": 1, "y": 2, "end_x": 3, "end_y": 4 })',
    );
  });
});
