import { describe, expect, it } from 'vitest';
import {
  fieldOfParam,
  newDraft,
  toDraft,
  toPolicy,
} from '../../src/renderer/src/settings/policy-drafts.js';
import { PolicyList, type Policy } from '../../src/shared/approvals.js';

const full: Policy = {
  id: 'payments',
  description: 'Paying needs a person',
  when: {
    action_types: ['click', 'type'],
    url_pattern: 'https://shop.example/**',
    new_origin: true,
    target: { role: 'button', name_pattern: '^Pay', input_type: 'password' },
    text_pattern: '\\d{16}',
    command_pattern: '^rm ',
    computer_ids: ['comp_a', 'comp_b'],
    task_only: true,
  },
  then: 'ask',
};

describe('the policies form', () => {
  it('sends back what it read, field for field', () => {
    expect(toPolicy(toDraft(full))).toEqual(full);
    const bare: Policy = { id: 'all', when: {}, then: 'deny' };
    expect(toPolicy(toDraft(bare))).toEqual(bare);
  });

  it('leaves out the conditions left empty, so a blank field never matches nothing', () => {
    const draft = {
      ...toDraft(full),
      url_pattern: '  ',
      'target.role': '',
      'target.name_pattern': '',
      'target.input_type': '',
      computer_ids: ' ',
      new_origin: false,
    };
    const policy = toPolicy(draft);
    expect(policy.when).not.toHaveProperty('url_pattern');
    expect(policy.when).not.toHaveProperty('target');
    expect(policy.when).not.toHaveProperty('computer_ids');
    expect(policy.when).not.toHaveProperty('new_origin');
    expect(PolicyList.safeParse([policy]).success).toBe(true);
  });

  it('reads computer ids separated by commas or spaces, and sends action types in the list order', () => {
    const draft = {
      ...toDraft(full),
      computer_ids: 'comp_a,comp_b  comp_c',
      action_types: ['type', 'click'] as const,
    };
    const policy = toPolicy({ ...draft, action_types: [...draft.action_types] });
    expect(policy.when.computer_ids).toEqual(['comp_a', 'comp_b', 'comp_c']);
    expect(policy.when.action_types).toEqual(['click', 'type']);
  });

  it('gives a new policy an id no other policy has, valid as it stands', () => {
    const first = newDraft([]);
    const taken = [{ ...first, id: 'policy-2' }];
    const second = newDraft(taken);
    expect(second.id).not.toBe('policy-2');
    expect(PolicyList.safeParse([...taken, second].map(toPolicy)).success).toBe(true);
  });
});

describe("a 400's param points at the field it names", () => {
  it.each([
    ['0.id', { index: 0, field: 'id' }],
    ['2.then', { index: 2, field: 'then' }],
    ['1.when.url_pattern', { index: 1, field: 'url_pattern' }],
    ['1.when.target.name_pattern', { index: 1, field: 'target.name_pattern' }],
    ['3.when.action_types.0', { index: 3, field: 'action_types' }],
    ['0.when.computer_ids.1', { index: 0, field: 'computer_ids' }],
    ['0.when.shape', { index: 0 }],
    ['0.when', { index: 0 }],
  ])('%s', (param, where) => {
    expect(fieldOfParam(param)).toEqual(where);
  });

  it('names no policy for an error about the list itself', () => {
    expect(fieldOfParam(undefined)).toBeUndefined();
    expect(fieldOfParam('')).toBeUndefined();
  });

  it('matches the params the server validation gives for the list', () => {
    const result = PolicyList.safeParse([full, { ...full, when: { text_pattern: '(' } }]);
    const issue = result.error!.issues[0]!;
    expect(fieldOfParam(issue.path.join('.'))).toEqual({ index: 1, field: 'text_pattern' });
  });
});
