import { z } from 'zod';
import {
  Approval,
  ApprovalDecisionBody,
  ApprovalListQuery,
  AttentionDismissBody,
  AttentionItem,
  Policy,
  PolicyList,
} from '../approvals.js';
import { empty, IdParams, json, route } from './route.js';

const tag = 'supervision';

const decide = <V extends 'approve' | 'deny'>(verb: V, summary: string) =>
  route({
    name: `approvals.${verb}`,
    method: 'post',
    path: `/approvals/{id}/${verb}`,
    params: IdParams,
    body: ApprovalDecisionBody,
    answer: json(Approval),
    summary,
    tag,
  });

/** docs/API.md §14: policies, approvals of held actions, and what waits for a person. */
export const APPROVAL_ROUTES = {
  'policies.get': route({
    name: 'policies.get',
    method: 'get',
    path: '/policies',
    answer: json(z.array(Policy)),
    summary: 'The policies every acting path is checked against, first match wins',
    tag,
  }),
  'policies.put': route({
    name: 'policies.put',
    method: 'put',
    path: '/policies',
    body: PolicyList,
    answer: json(z.array(Policy)),
    summary: "Replace the policies (the machine owner's keys only)",
    tag,
  }),
  'approvals.list': route({
    name: 'approvals.list',
    method: 'get',
    path: '/approvals',
    query: ApprovalListQuery,
    answer: json(z.array(Approval)),
    summary: "The organization's approvals, newest first",
    tag,
  }),
  'approvals.get': route({
    name: 'approvals.get',
    method: 'get',
    path: '/approvals/{id}',
    params: IdParams,
    answer: json(Approval),
    summary: 'One approval',
    tag,
  }),
  'approvals.approve': decide(
    'approve',
    'Let the held action run; answers once it ran, or expired because the page or target changed (then it is asked again)',
  ),
  'approvals.deny': decide('deny', 'Refuse the held action: nothing runs, the caller is told'),
  'attention.list': route({
    name: 'attention.list',
    method: 'get',
    path: '/attention',
    answer: json(z.array(AttentionItem)),
    summary: 'What waits for a person, oldest first',
    tag,
  }),
  'attention.dismiss': route({
    name: 'attention.dismiss',
    method: 'post',
    path: '/attention/dismiss',
    body: AttentionDismissBody,
    answer: empty,
    summary:
      'Take a failed task out of what waits for a person (it has been seen); other items leave when acted on',
    tag,
  }),
} as const;
