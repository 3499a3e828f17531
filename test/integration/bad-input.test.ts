import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionResult, BatchResult } from '../../src/shared/actions.js';
import type { Computer } from '../../src/shared/computers.js';
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.js';
import { pageState } from '../helpers/page-state.js';
import { ACTION_SEGMENTS, ROUTES, VALID_BODY } from '../helpers/routes.js';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.js';

/**
 * Bad input for every route of the server, as a table. Every case must be answered with the
 * contract's error body and a 4xx that the SDKs do not retry (never 409, never 5xx), and the
 * server must keep serving afterwards.
 */

type Route = (typeof ROUTES)[number];

/** Routes whose body is a JSON object with fields (non-object JSON must be refused there). */
const BODY_ROUTES: Route[] = [
  'POST /computers',
  ...ACTION_SEGMENTS.map((segment) => `POST /computers/:id/${segment}` as Route),
  'POST /computers/:id/tabs',
  'POST /computers/:id/exec/sync',
  'POST /v1/responses',
  'POST /v1/chat/completions',
  'POST /agent/tasks',
  'POST /agent/tasks/stream',
  'POST /agent/tasks/:id/messages',
  'POST /agent/tasks/:id/handoff',
  'POST /approvals/:id/approve',
  'POST /approvals/:id/deny',
  'POST /attention/dismiss',
  'POST /secrets',
  'PATCH /settings',
];

const UNKNOWN_COMPUTER = 'comp_doesnotexist000000000';
const UNKNOWN_TAB = 'tab_doesnotexist0000000000';
const MIB = 1024 * 1024;

type Expected = {
  status: number;
  code: string;
  /** A string: param must equal it. null: param must be absent. undefined: not checked. */
  param?: string | null;
  message?: RegExp;
};

type Case = Expected & {
  route: Route;
  name: string;
  body?: unknown;
  raw?: string;
  contentType?: string | null;
  query?: string;
  /** The computer in the path: 'live' (default), 'spare', 'unknown', or a literal id. */
  id?: string;
  tab?: 'main' | 'unknown';
  /** Path parameters of the screenshot route. */
  screenshot?: { computer: string; file: string };
};

const bad = (
  route: Route,
  name: string,
  body: unknown,
  param: string | null,
  message?: RegExp,
): Case => ({
  route,
  name,
  body,
  status: 400,
  code: 'invalid_request',
  param,
  message,
});

const NOT_JSON = {
  status: 400,
  code: 'invalid_request',
  param: null,
  message: /body is not valid JSON/,
};

function deeplyNested(depth: number): string {
  return `{"x":10,"y":10,"extra":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

const CASES: Case[] = [
  // ---- POST /computers
  bad('POST /computers', 'unknown kind', { kind: 'toaster' }, 'kind', /kind/),
  bad('POST /computers', 'kind of the wrong type', { kind: 5 }, 'kind'),
  bad('POST /computers', 'display not an object', { display: 'big' }, 'display'),
  bad(
    'POST /computers',
    'display width too small',
    { display: { width: 10, height: 600 } },
    'display.width',
  ),
  bad(
    'POST /computers',
    'display width huge',
    { display: { width: 1e9, height: 600 } },
    'display.width',
  ),
  bad(
    'POST /computers',
    'display height a string',
    { display: { width: 800, height: '600' } },
    'display.height',
  ),
  bad(
    'POST /computers',
    'display width fractional',
    { display: { width: 800.5, height: 600 } },
    'display.width',
  ),
  bad(
    'POST /computers',
    'display scale absurd',
    { display: { width: 800, height: 600, scale: 100 } },
    'display.scale',
  ),
  bad(
    'POST /computers',
    'negative max lifetime',
    { max_lifetime_seconds: -1 },
    'max_lifetime_seconds',
  ),
  bad('POST /computers', 'zero max lifetime', { max_lifetime_seconds: 0 }, 'max_lifetime_seconds'),
  bad(
    'POST /computers',
    'absurd max lifetime',
    { max_lifetime_seconds: 1e12 },
    'max_lifetime_seconds',
  ),
  {
    ...bad(
      'POST /computers',
      'max lifetime overflowing to Infinity',
      undefined,
      'max_lifetime_seconds',
    ),
    raw: '{"max_lifetime_seconds": 1e400}',
  },
  bad(
    'POST /computers',
    'max lifetime as a string',
    { max_lifetime_seconds: '60' },
    'max_lifetime_seconds',
  ),
  bad(
    'POST /computers',
    'negative timeout_seconds (alias)',
    { timeout_seconds: -5 },
    'timeout_seconds',
  ),
  bad(
    'POST /computers',
    'negative inactivity timeout',
    { inactivity_timeout_seconds: -1 },
    'inactivity_timeout_seconds',
  ),
  bad(
    'POST /computers',
    'absurd inactivity timeout',
    { inactivity_timeout_seconds: 1e10 },
    'inactivity_timeout_seconds',
  ),
  bad(
    'POST /computers',
    'inactivity timeout as a string',
    { inactivity_timeout_seconds: '60' },
    'inactivity_timeout_seconds',
  ),
  bad(
    'POST /computers',
    'idle_timeout_enabled as a string',
    { idle_timeout_enabled: 'no' },
    'idle_timeout_enabled',
  ),
  bad('POST /computers', 'auto_kill as a number', { auto_kill: 0 }, 'auto_kill'),
  bad('POST /computers', 'persistent as a string', { persistent: 'true' }, 'persistent'),
  bad(
    'POST /computers',
    'unknown environment_id',
    { environment_id: 'env_nope' },
    'environment_id',
  ),
  bad('POST /computers', 'empty environment_id', { environment_id: '' }, 'environment_id'),
  bad('POST /computers', 'context_id as a number', { context_id: 42 }, 'context_id'),
  bad('POST /computers', 'stealth not an object', { stealth: true }, 'stealth'),
  bad(
    'POST /computers',
    'use_advanced_proxy as a string',
    { use_advanced_proxy: 'yes' },
    'use_advanced_proxy',
  ),
  bad(
    'POST /computers',
    'use_advanced_proxy without a configured proxy',
    { use_advanced_proxy: true },
    'use_advanced_proxy',
  ),
  bad('POST /computers', 'cdp as a string', { cdp: 'yes' }, 'cdp'),
  bad('POST /computers', 'cdp on a desktop', { kind: 'desktop', cdp: true }, 'cdp', /browser/),

  // ---- GET /computers
  { ...bad('GET /computers', 'unknown list type', undefined, 'type'), query: '?type=bogus' },
  { ...bad('GET /recordings', 'limit 0', undefined, 'limit'), query: '?limit=0' },
  { ...bad('GET /screencasts', 'no computer named', undefined, 'ids'), query: '?ids=,' },
  { ...bad('GET /screencasts', 'fps 0', undefined, 'fps'), query: '?ids=comp_x&fps=0' },
  { ...bad('GET /recordings', 'limit not a number', undefined, 'limit'), query: '?limit=many' },
  {
    ...bad('GET /computers', 'list type given twice', undefined, 'type'),
    query: '?type=live&type=persistent',
  },

  // ---- single-action endpoints
  bad('POST /computers/:id/click', 'missing x', { y: 10 }, 'x', /x/),
  bad('POST /computers/:id/click', 'missing y', { x: 10 }, 'y', /y/),
  bad('POST /computers/:id/click', 'empty object', {}, 'x'),
  bad('POST /computers/:id/click', 'x as a string', { x: '10', y: 10 }, 'x'),
  bad('POST /computers/:id/click', 'x as a boolean', { x: true, y: 10 }, 'x'),
  bad('POST /computers/:id/click', 'negative x', { x: -1, y: 10 }, 'x'),
  bad('POST /computers/:id/click', 'huge y', { x: 10, y: 1e9 }, 'y'),
  {
    ...bad('POST /computers/:id/click', 'x overflowing to Infinity', undefined, 'x'),
    raw: '{"x": 1e400, "y": 10}',
  },
  bad('POST /computers/:id/click', 'unknown button', { x: 10, y: 10, button: 'laser' }, 'button'),
  bad('POST /computers/:id/click', 'tab_id as a number', { x: 10, y: 10, tab_id: 5 }, 'tab_id'),
  bad(
    'POST /computers/:id/click',
    'include_context as a string',
    { x: 10, y: 10, include_context: 'yes' },
    'include_context',
  ),
  bad(
    'POST /computers/:id/click',
    'request_id as an object',
    { x: 10, y: 10, request_id: { a: 1 } },
    'request_id',
  ),
  {
    ...bad('POST /computers/:id/click', 'body nested 10000 levels deep', undefined, null),
    raw: deeplyNested(10_000),
  },
  bad('POST /computers/:id/double-click', 'missing y', { x: 10 }, 'y'),
  bad('POST /computers/:id/double-click', 'y as null only', { x: 10, y: null }, 'y'),
  bad('POST /computers/:id/right-click', 'coordinates as strings', { x: 'left', y: 'top' }, 'x'),
  bad('POST /computers/:id/mouse-down', 'x as a boolean', { x: false, y: 10 }, 'x'),
  bad(
    'POST /computers/:id/mouse-down',
    'unknown button',
    { x: 1, y: 1, button: 'fourth' },
    'button',
  ),
  bad('POST /computers/:id/mouse-up', 'negative y', { x: 10, y: -5 }, 'y'),
  bad('POST /computers/:id/drag', 'missing y2', { x1: 1, y1: 1, x2: 2 }, 'y2'),
  bad('POST /computers/:id/drag', 'empty object', {}, 'x1'),
  bad('POST /computers/:id/drag', 'path of one point', { path: [{ x: 1, y: 1 }] }, 'path'),
  bad(
    'POST /computers/:id/drag',
    'path point without y',
    { path: [{ x: 1 }, { x: 2, y: 2 }] },
    'path.0.y',
  ),
  bad('POST /computers/:id/drag', 'path not a list', { path: 'here' }, 'path'),
  bad('POST /computers/:id/scroll', 'missing x', { y: 1, dy: 10 }, 'x'),
  bad('POST /computers/:id/scroll', 'dx as a string', { x: 1, y: 1, dx: 'a' }, 'dx'),
  bad('POST /computers/:id/scroll', 'absurd dy', { x: 1, y: 1, dy: 1e9 }, 'dy'),
  bad('POST /computers/:id/type', 'missing text', {}, 'text', /text/),
  bad('POST /computers/:id/type', 'text as a number', { text: 5 }, 'text'),
  bad('POST /computers/:id/type', 'text as a list', { text: ['a'] }, 'text'),
  bad('POST /computers/:id/type', 'text absurdly long', { text: 'a'.repeat(100_001) }, 'text'),
  bad('POST /computers/:id/hotkey', 'missing keys', {}, 'keys'),
  bad('POST /computers/:id/hotkey', 'empty keys', { keys: [] }, 'keys'),
  bad('POST /computers/:id/hotkey', 'keys as a string', { keys: 'ctrl+a' }, 'keys'),
  bad('POST /computers/:id/hotkey', 'an empty key name', { keys: [''] }, 'keys.0'),
  bad('POST /computers/:id/hotkey', 'a key name as a number', { keys: [1] }, 'keys.0'),
  bad(
    'POST /computers/:id/hotkey',
    'an unknown key name',
    { keys: ['ctrl', 'bogus'] },
    'keys.1',
    /bogus/,
  ),
  bad(
    'POST /computers/:id/hotkey',
    'an unknown key in a combination',
    { keys: ['ctrl+blorp'] },
    'keys.0',
    /blorp/,
  ),
  bad('POST /computers/:id/hotkey', 'a control character', { keys: ['\u0001'] }, 'keys.0'),
  bad('POST /computers/:id/key-down', 'missing key', {}, 'key'),
  bad(
    'POST /computers/:id/key-down',
    'an unknown key name',
    { key: 'hyperkey' },
    'key',
    /hyperkey/,
  ),
  bad('POST /computers/:id/key-down', 'a combination instead of one key', { key: 'ctrl+a' }, 'key'),
  bad('POST /computers/:id/key-down', 'an empty key', { key: '' }, 'key'),
  bad('POST /computers/:id/key-up', 'key as a number', { key: 5 }, 'key'),
  bad('POST /computers/:id/key-up', 'an unknown key name', { key: 'F99' }, 'key', /F99/),
  bad('POST /computers/:id/navigate', 'missing url', {}, 'url'),
  bad('POST /computers/:id/navigate', 'empty url', { url: '' }, 'url'),
  bad('POST /computers/:id/navigate', 'url as a number', { url: 42 }, 'url'),
  bad('POST /computers/:id/navigate', 'javascript: url', { url: 'javascript:alert(1)' }, 'url'),
  bad('POST /computers/:id/navigate', 'file: url', { url: 'file:///etc/passwd' }, 'url'),
  bad('POST /computers/:id/navigate', 'url with no host', { url: 'http://' }, 'url'),
  bad('POST /computers/:id/screenshot', 'base64 as a string', { base64: 'yes' }, 'base64'),
  bad(
    'POST /computers/:id/html',
    'auto_detect_encoding as a number',
    { auto_detect_encoding: 1 },
    'auto_detect_encoding',
  ),
  bad('POST /computers/:id/viewport', 'missing height', { width: 800 }, 'height'),
  bad('POST /computers/:id/viewport', 'width too small', { width: 10, height: 600 }, 'width'),
  bad('POST /computers/:id/viewport', 'width huge', { width: 1e6, height: 600 }, 'width'),
  bad('POST /computers/:id/viewport', 'negative height', { width: 800, height: -600 }, 'height'),
  bad('POST /computers/:id/viewport', 'fractional width', { width: 800.5, height: 600 }, 'width'),
  bad(
    'POST /computers/:id/viewport',
    'another scale than the computer has',
    { width: 800, height: 600, scale_factor: 2 },
    'scale_factor',
  ),
  bad('POST /computers/:id/change-proxy', 'missing proxy_url', {}, 'proxy_url'),
  bad(
    'POST /computers/:id/change-proxy',
    'proxy_url not a URL',
    { proxy_url: 'not a url' },
    'proxy_url',
  ),
  bad(
    'POST /computers/:id/change-proxy',
    'proxy_url of an unsupported scheme',
    { proxy_url: 'ftp://proxy:21' },
    'proxy_url',
  ),
  bad(
    'POST /computers/:id/change-proxy',
    'proxy_url as a boolean',
    { proxy_url: false },
    'proxy_url',
  ),
  bad('POST /computers/:id/debug', 'missing command', {}, 'command'),
  bad('POST /computers/:id/debug', 'empty command', { command: '' }, 'command'),
  bad(
    'POST /computers/:id/debug',
    'negative timeout',
    { command: 'true', timeout_seconds: -1 },
    'timeout_seconds',
  ),
  bad(
    'POST /computers/:id/debug',
    'absurd timeout',
    { command: 'true', timeout_seconds: 1e9 },
    'timeout_seconds',
  ),
  bad(
    'POST /computers/:id/debug',
    'zero max_output_length',
    { command: 'true', max_output_length: 0 },
    'max_output_length',
  ),
  bad(
    'POST /computers/:id/debug',
    'env value as a number',
    { command: 'true', env: { A: 1 } },
    'env.A',
  ),
  bad(
    'POST /computers/:id/debug',
    'cwd that does not exist',
    { command: 'true', cwd: '/nonexistent/dir' },
    'cwd',
  ),

  // ---- /exec/sync (bad input to /exec is an error line: see EXEC_ERROR_LINES)
  bad('POST /computers/:id/exec/sync', 'missing command', {}, 'command', /command/),
  bad('POST /computers/:id/exec/sync', 'empty command', { command: '' }, 'command'),
  bad('POST /computers/:id/exec/sync', 'command as a number', { command: 5 }, 'command'),
  bad('POST /computers/:id/exec/sync', 'command as a list', { command: ['ls'] }, 'command'),
  bad(
    'POST /computers/:id/exec/sync',
    'timeout as a string',
    { command: 'true', timeout_seconds: '10' },
    'timeout_seconds',
  ),
  bad(
    'POST /computers/:id/exec/sync',
    'timeout over an hour',
    { command: 'true', timeout_seconds: 3601 },
    'timeout_seconds',
  ),
  bad(
    'POST /computers/:id/exec/sync',
    'negative timeout',
    { command: 'true', timeout_seconds: -1 },
    'timeout_seconds',
  ),
  bad(
    'POST /computers/:id/exec/sync',
    'fractional max_output_length',
    { command: 'true', max_output_length: 1.5 },
    'max_output_length',
  ),
  bad('POST /computers/:id/exec/sync', 'env as a list', { command: 'true', env: ['A=1'] }, 'env'),
  bad(
    'POST /computers/:id/exec/sync',
    'env value as a number',
    { command: 'true', env: { A: 1 } },
    'env.A',
  ),
  bad('POST /computers/:id/exec/sync', 'cwd as a number', { command: 'true', cwd: 1 }, 'cwd'),
  bad(
    'POST /computers/:id/exec/sync',
    'cwd that does not exist',
    { command: 'true', cwd: 'no/such/dir' },
    'cwd',
  ),

  // ---- /execute
  bad('POST /computers/:id/execute', 'empty object', {}, 'type', /type/),
  bad('POST /computers/:id/execute', 'unknown bare type', { type: 'fly', x: 1 }, 'type', /fly/),
  bad(
    'POST /computers/:id/execute',
    'unknown wrapped type',
    { action: { type: 'teleport' } },
    'action.type',
    /teleport/,
  ),
  bad('POST /computers/:id/execute', 'type as a number', { action: { type: 7 } }, 'action.type'),
  bad('POST /computers/:id/execute', 'action as a string', { action: 'click' }, 'action'),
  bad(
    'POST /computers/:id/execute',
    'action as a list',
    { action: [{ type: 'click', x: 1, y: 1 }] },
    'action',
  ),
  bad(
    'POST /computers/:id/execute',
    'wrapped click missing y',
    { action: { type: 'click', x: 1 } },
    'action.y',
  ),
  bad(
    'POST /computers/:id/execute',
    'bare click with negative x',
    { type: 'click', x: -1, y: 1 },
    'x',
  ),
  bad(
    'POST /computers/:id/execute',
    'wrapped keypress with an unknown key',
    { action: { type: 'keypress', keys: ['ctrl', 'nokey'] } },
    'action.keys.1',
    /nokey/,
  ),
  bad(
    'POST /computers/:id/execute',
    'bare keypress with an unknown key',
    { type: 'keypress', keys: ['nokey'] },
    'keys.0',
    /nokey/,
  ),
  bad(
    'POST /computers/:id/execute',
    'hotkey alias with an unknown key',
    { action: { type: 'hotkey', keys: ['zzz'] } },
    'action.keys.0',
    /zzz/,
  ),
  bad(
    'POST /computers/:id/execute',
    'key_down with an unknown key',
    { action: { type: 'key_down', key: 'nokey' } },
    'action.key',
    /nokey/,
  ),
  bad(
    'POST /computers/:id/execute',
    'key_up with an unknown keys[0]',
    { action: { type: 'key_up', keys: ['nokey'] } },
    'action.keys.0',
    /nokey/,
  ),
  bad(
    'POST /computers/:id/execute',
    'wait too long',
    { action: { type: 'wait', ms: 60_000 } },
    'action.ms',
  ),
  bad(
    'POST /computers/:id/execute',
    'negative wait',
    { action: { type: 'wait', ms: -1 } },
    'action.ms',
  ),
  bad(
    'POST /computers/:id/execute',
    'switch_tab without tab_id',
    { action: { type: 'switch_tab' } },
    'action.tab_id',
  ),
  bad(
    'POST /computers/:id/execute',
    'go_to_url with a bad scheme',
    { action: { type: 'go_to_url', url: 'chrome://settings' } },
    'action.url',
  ),
  bad(
    'POST /computers/:id/execute',
    'debug without a command',
    { action: { type: 'debug', debug: {} } },
    'action.debug.command',
  ),
  bad(
    'POST /computers/:id/execute',
    'debug with a cwd that does not exist',
    { action: { type: 'debug', debug: { command: 'true', cwd: '/nonexistent/dir' } } },
    'action.debug.cwd',
  ),
  bad(
    'POST /computers/:id/execute',
    'set_viewport with another scale than the computer has',
    { action: { type: 'set_viewport', width: 800, height: 600, scale_factor: 2 } },
    'action.scale_factor',
  ),

  // ---- /batch
  bad('POST /computers/:id/batch', 'missing actions', {}, 'actions'),
  bad('POST /computers/:id/batch', 'actions not a list', { actions: 'click' }, 'actions'),
  bad(
    'POST /computers/:id/batch',
    'actions an object',
    { actions: { 0: { type: 'wait' } } },
    'actions',
  ),
  bad(
    'POST /computers/:id/batch',
    'unknown type at index 1',
    { actions: [{ type: 'wait', ms: 0 }, { type: 'fly' }] },
    'actions.1.type',
    /fly/,
  ),
  bad(
    'POST /computers/:id/batch',
    'missing type at index 0',
    { actions: [{ x: 1, y: 1 }] },
    'actions.0.type',
  ),
  bad('POST /computers/:id/batch', 'null action at index 0', { actions: [null] }, 'actions.0'),
  bad(
    'POST /computers/:id/batch',
    'string action at index 1',
    { actions: [{ type: 'wait', ms: 0 }, 'click'] },
    'actions.1',
  ),
  bad(
    'POST /computers/:id/batch',
    'missing field at index 1',
    {
      actions: [
        { type: 'click', x: 1, y: 1 },
        { type: 'click', x: 1 },
      ],
    },
    'actions.1.y',
  ),
  bad(
    'POST /computers/:id/batch',
    'unknown key at index 2',
    {
      actions: [
        { type: 'wait', ms: 0 },
        { type: 'wait', ms: 0 },
        { type: 'keypress', keys: ['ctrl', 'nokey'] },
      ],
    },
    'actions.2.keys.1',
    /nokey/,
  ),
  bad(
    'POST /computers/:id/batch',
    'bad url at index 1',
    {
      actions: [
        { type: 'wait', ms: 0 },
        { type: 'navigate', url: 'javascript:1' },
      ],
    },
    'actions.1.url',
  ),
  bad(
    'POST /computers/:id/batch',
    '501 actions',
    { actions: Array.from({ length: 501 }, () => ({ type: 'wait', ms: 0 })) },
    'actions',
  ),

  // ---- tabs
  bad('POST /computers/:id/tabs', 'url as a number', { url: 5 }, 'url'),
  bad('POST /computers/:id/tabs', 'empty url', { url: '' }, 'url'),
  bad('POST /computers/:id/tabs', 'javascript: url', { url: 'javascript:alert(1)' }, 'url'),
  bad('POST /computers/:id/tabs', 'request_id as a number', { request_id: 5 }, 'request_id'),

  // ---- unknown ids: 404 for computers and tabs
  ...ROUTES.filter((route) => route.includes(':id')).map((route): Case => ({
    route,
    name: 'unknown computer',
    id: 'unknown',
    tab: 'unknown',
    body: VALID_BODY[route],
    status: 404,
    code: 'not_found',
    message: new RegExp(UNKNOWN_COMPUTER),
  })),
  {
    route: 'GET /computers/:id',
    name: 'id with path characters',
    id: encodeURIComponent('comp_../../keys.json'),
    status: 404,
    code: 'not_found',
  },
  {
    route: 'GET /computers/:id',
    name: 'a 5000-character id',
    id: `comp_${'x'.repeat(5000)}`,
    status: 404,
    code: 'not_found',
  },
  {
    route: 'POST /computers/:id/tabs/:tab_id/switch',
    name: 'unknown tab',
    tab: 'unknown',
    status: 404,
    code: 'not_found',
    message: new RegExp(UNKNOWN_TAB),
  },
  {
    route: 'DELETE /computers/:id/tabs/:tab_id',
    name: 'unknown tab',
    tab: 'unknown',
    status: 404,
    code: 'not_found',
    message: new RegExp(UNKNOWN_TAB),
  },
  {
    route: 'GET /screenshots/:computer/:file',
    name: 'garbage screenshot path',
    screenshot: { computer: 'comp_garbage', file: 'garbage.png' },
    status: 404,
    code: 'not_found',
  },
  {
    route: 'GET /screenshots/:computer/:file',
    name: 'path traversal in the screenshot file',
    screenshot: { computer: 'comp_garbage', file: encodeURIComponent('../../keys.json') },
    status: 404,
    code: 'not_found',
  },

  // ---- bodies that are not JSON
  ...ROUTES.filter((route) => route.startsWith('POST') || route.startsWith('DELETE')).map(
    (route): Case => ({
      route,
      name: 'body that is not JSON',
      raw: '{"x": 10,',
      contentType: 'application/json',
      id: route === 'DELETE /computers/:id' ? 'spare' : 'live',
      tab: 'main',
      ...NOT_JSON,
    }),
  ),
  {
    route: 'POST /computers/:id/click',
    name: 'plain text body sent as text/plain',
    raw: 'click at 10,10',
    contentType: 'text/plain',
    ...NOT_JSON,
  },
  {
    route: 'POST /computers/:id/click',
    name: 'form-encoded body',
    raw: 'x=10&y=10',
    contentType: 'application/x-www-form-urlencoded',
    ...NOT_JSON,
  },

  // ---- responses and chat
  bad('POST /v1/responses', 'no input', {}, 'input', /input is required/),
  bad('POST /v1/responses', 'input of the wrong type', { input: 5 }, 'input'),
  bad(
    'POST /v1/responses',
    'temperature out of range',
    { input: 'x', temperature: 3 },
    'temperature',
  ),
  bad(
    'POST /v1/responses',
    'unknown model',
    { input: 'x', model: 'nope' },
    'model',
    /unknown model "nope"/,
  ),
  bad(
    'POST /v1/responses',
    'a message without content',
    { input: [{ role: 'user' }] },
    'input.0.content',
  ),
  bad(
    'POST /v1/responses',
    'an input_image without image_url',
    { input: [{ role: 'user', content: [{ type: 'input_image' }] }] },
    'input.0.content.0.image_url',
  ),
  bad(
    'POST /v1/responses',
    'a computer tool without its display size',
    { input: 'x', tools: [{ type: 'computer_use' }] },
    'tools.0.display_width',
  ),
  bad('POST /v1/chat/completions', 'no messages', {}, 'messages'),
  bad(
    'POST /v1/chat/completions',
    'unknown model',
    { model: 'nope', messages: [{ role: 'user', content: 'x' }] },
    'model',
    /unknown model/,
  ),

  // ---- agent tasks
  bad('POST /agent/tasks', 'no instruction', {}, 'instruction', /instruction is required/),
  bad('POST /agent/tasks', 'kind unknown', { instruction: 'x', kind: 'phone' }, 'kind'),
  bad('POST /agent/tasks', 'max_steps over 500', { instruction: 'x', max_steps: 501 }, 'max_steps'),
  bad(
    'POST /agent/tasks',
    'unknown model',
    { instruction: 'x', model: 'nope' },
    'model',
    /unknown model/,
  ),
  bad(
    'POST /agent/tasks',
    'bad screenshot_mode',
    { instruction: 'x', screenshot_mode: 'gif' },
    'screenshot_mode',
  ),
  bad('POST /agent/tasks/stream', 'no instruction', {}, 'instruction', /instruction is required/),
  bad('POST /agent/tasks/:id/messages', 'no message', {}, 'message', /message is required/),

  // ---- keys and settings (settings.test.ts has the rest; no case here may change a setting)
  { ...bad('POST /keys', 'a JSON array as the body', undefined, null), raw: '[1, 2]' },
  bad('PATCH /settings', 'unknown section', { colour: 'blue' }, 'colour', /unknown settings/),
  bad('PUT /policies', 'not a list', { id: 'x' }, null),
  bad('PUT /policies', 'no then', [{ id: 'x' }], '0.then'),
  bad('PUT /policies', 'then not a decision', [{ id: 'x', then: 'maybe' }], '0.then'),
  bad(
    'PUT /policies',
    'unknown condition',
    [{ id: 'x', when: { colour: 1 }, then: 'ask' }],
    '0.when.colour',
    /is not a condition; a policy's when has action_types/,
  ),
  bad(
    'PUT /policies',
    'bad regex',
    [{ id: 'x', when: { command_pattern: '[' }, then: 'ask' }],
    '0.when.command_pattern',
    /not a valid regular expression/,
  ),
  bad(
    'PUT /policies',
    'unknown action type',
    [{ id: 'x', when: { action_types: ['fly'] }, then: 'ask' }],
    '0.when.action_types.0',
  ),
  { ...bad('GET /approvals', 'unknown status', undefined, 'status'), query: '?status=maybe' },
  {
    ...bad('GET /v1/usage', 'since that is not a time', undefined, 'since', /ISO-8601/),
    query: '?since=yesterday',
  },
  { ...bad('GET /v1/usage', 'limit of 0', undefined, 'limit'), query: '?limit=0' },
  {
    ...bad('GET /v1/usage', 'an unknown cursor', undefined, 'after', /last_id/),
    query: '?after=use_nothing',
  },
  bad('POST /agent/tasks/:id/handoff', 'no reason', {}, 'reason'),
  bad('POST /approvals/:id/approve', 'note as a number', { note: 5 }, 'note'),
  bad('POST /attention/dismiss', 'no task_id', {}, 'task_id'),
  {
    ...bad('POST /attention/dismiss', 'an unknown task', { task_id: 'task_nope' }, null),
    status: 404,
    code: 'not_found',
  },
  bad('POST /secrets', 'no value', { name: 'PW' }, 'value'),
  bad(
    'POST /secrets',
    'a name that cannot be a placeholder',
    { name: 'a b', value: 'long' },
    'name',
  ),
  bad('POST /secrets', 'a value too short to scrub', { name: 'PIN', value: '123' }, 'value'),
  {
    ...bad('DELETE /secrets/:name', 'an unknown name', undefined, 'name'),
    status: 404,
    code: 'not_found',
  },
  bad('PATCH /settings', 'unknown key', { limits: { speed: 1 } }, 'limits.speed', /limits\.speed/),
  bad('PATCH /settings', 'wrong type', { limits: { max_tabs: 'many' } }, 'limits.max_tabs'),
  bad('PATCH /settings', 'out of range', { server: { port: 70_000 } }, 'server.port'),
  bad(
    'PATCH /settings',
    'a provider without its kind',
    { models: { providers: { half: { script: '/tmp/x.json' } } } },
    'models.providers.half.provider',
  ),
  {
    ...bad('PATCH /settings', 'body that is not JSON', undefined, null),
    ...NOT_JSON,
    raw: '{"a":',
  },

  // ---- JSON that is not an object
  ...BODY_ROUTES.flatMap((route): Case[] =>
    [
      ['a JSON array', '[1, 2]'],
      ['a JSON string', '"click"'],
      ['a JSON number', '42'],
    ].map(([name, raw]) => ({
      route,
      name: `${name} as the body`,
      raw,
      status: 400,
      code: 'invalid_request',
    })),
  ),

  // ---- empty bodies on routes that need fields
  {
    ...bad('POST /computers/:id/click', 'empty body with Content-Type json', undefined, 'x'),
    raw: '',
  },
  {
    ...bad('POST /computers/:id/click', 'no body and no Content-Type', undefined, 'x'),
    contentType: null,
  },
  {
    ...bad('POST /computers/:id/batch', 'empty body with Content-Type json', undefined, 'actions'),
    raw: '',
  },
  {
    ...bad('POST /computers/:id/execute', 'no body and no Content-Type', undefined, 'type'),
    contentType: null,
  },

  // ---- bodies over 10 MiB
  {
    route: 'POST /computers/:id/type',
    name: 'a body over 10 MiB',
    raw: JSON.stringify({ text: 'a'.repeat(10 * MIB + 1) }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    route: 'POST /computers',
    name: 'a body over 10 MiB',
    raw: JSON.stringify({ context_id: 'a'.repeat(11 * MIB) }),
    status: 413,
    code: 'payload_too_large',
  },
  {
    // Just under the limit: read, then refused by the field's own bound.
    ...bad('POST /computers/:id/type', 'a 9 MiB body', undefined, 'text'),
    raw: JSON.stringify({ text: 'a'.repeat(9 * MIB) }),
  },
];

/** Requests that look odd but are valid: unknown fields, nulls, empty bodies. They must succeed. */
type Accepted = {
  route: Route;
  name: string;
  body?: unknown;
  raw?: string;
  contentType?: string | null;
  headers?: Record<string, string>;
  query?: string;
  status?: number;
  check?: (response: ApiResponse) => void;
};

const succeeded = (response: ApiResponse<ActionResult>) => {
  expect(response.body.status, response.text).toBe('success');
};

const ACCEPTED: Accepted[] = [
  {
    route: 'GET /policies',
    name: 'unknown query parameters',
    query: '?all=1',
    check: (response) => expect(Array.isArray(response.body)).toBe(true),
  },
  {
    route: 'GET /attention',
    name: 'unknown query parameters',
    query: '?type=approval',
    check: (response) => expect(Array.isArray(response.body)).toBe(true),
  },
  {
    route: 'GET /secrets',
    name: 'unknown query parameters',
    query: '?with_values=1',
    check: (response) => expect(response.text).not.toContain('value'),
  },
  {
    route: 'GET /keys',
    name: 'unknown query parameters',
    query: '?limit=1',
    check: (response) => expect(Array.isArray(response.body)).toBe(true),
  },
  {
    route: 'POST /keys',
    name: 'unknown fields',
    body: { note: 'for the CI', org: 'someone-else' },
    check: (response) => expect(response.body).toMatchObject({ org: 'local', revoked_at: null }),
  },
  {
    route: 'GET /settings',
    name: 'unknown query parameters',
    query: '?section=limits',
    check: (response) => expect(response.body.settings.exec).toMatchObject({ enabled: true }),
  },
  {
    route: 'PATCH /settings',
    name: 'an empty patch',
    body: {},
    check: (response) => expect(response.body.restart_required).toEqual([]),
  },
  {
    route: 'GET /agent/tasks',
    name: 'unknown query parameters',
    query: '?limit=1',
    check: (response) => expect(Array.isArray(response.body)).toBe(true),
  },
  {
    route: 'GET /v1/usage',
    name: 'unknown query parameters',
    query: '?model=x',
    check: (response) => expect(response.body).toMatchObject({ object: 'list' }),
  },
  {
    route: 'GET /backends',
    name: 'unknown query parameters',
    query: '?status=down',
    check: (response) => expect(response.body).toMatchObject([{ name: 'local', status: 'up' }]),
  },
  {
    route: 'GET /v1/models',
    name: 'unknown query parameters',
    query: '?limit=1',
    check: (response) => expect(response.body.object).toBe('list'),
  },
  { route: 'GET /health', name: 'unknown query parameters', query: '?foo=bar' },
  { route: 'GET /openapi.json', name: 'unknown query parameters', query: '?foo=bar' },
  {
    route: 'GET /computers',
    name: 'unknown query parameters',
    query: '?foo=bar&limit=-1',
    check: (response) => expect(Array.isArray(response.body)).toBe(true),
  },
  {
    route: 'GET /computers/:id',
    name: 'unknown X-Stainless headers',
    headers: { 'x-stainless-retry-count': '0', 'x-stainless-something-new': 'whatever' },
  },
  { route: 'GET /computers/:id/status', name: 'unknown query parameters', query: '?verbose=1' },
  {
    route: 'GET /computers/:id/tabs',
    name: 'unknown query parameters',
    query: '?all=1',
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/keepalive',
    name: 'empty body with Content-Type json (Python SDK)',
    raw: '',
  },
  {
    route: 'POST /computers/:id/keepalive',
    name: 'no body, no Content-Type (TS SDK)',
    contentType: null,
  },
  {
    route: 'POST /computers/:id/keepalive',
    name: 'empty body with Content-Type json; charset=utf-8',
    raw: '',
    contentType: 'application/json; charset=utf-8',
  },
  {
    route: 'POST /computers/:id/keepalive',
    name: 'unknown fields and nulls',
    body: { foo: 1, bar: null },
  },
  {
    route: 'POST /computers/:id/tabs/:tab_id/switch',
    name: 'empty body with Content-Type json (Python SDK)',
    raw: '',
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/tabs/:tab_id/switch',
    name: 'no body, no Content-Type (TS SDK)',
    contentType: null,
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/screenshot',
    name: 'empty body with Content-Type json',
    raw: '',
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/html',
    name: 'no body, no Content-Type',
    contentType: null,
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/click',
    name: 'unknown fields and null optional fields',
    body: {
      x: 10,
      y: 10,
      button: null,
      tab_id: null,
      request_id: null,
      include_context: null,
      foo: 'bar',
      nested: { a: [1] },
    },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/click',
    name: 'unknown X-Stainless headers',
    body: { x: 10, y: 10 },
    headers: {
      'x-stainless-retry-count': '0',
      'x-stainless-lang': 'js',
      'x-stainless-brand-new': '1',
    },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/type',
    name: 'unknown fields',
    body: { text: 'ok', delay: 5, typing_speed: null },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/hotkey',
    name: 'unknown fields and nulls',
    body: { keys: ['Shift'], duration: null, extra: true },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/screenshot',
    name: 'null base64 and unknown fields',
    body: { base64: null, quality: 50 },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/execute',
    name: 'unknown fields and nulls, wrapped',
    body: {
      action: { type: 'click', x: 10, y: 10, button: null, extra: 1 },
      extra: true,
      tab_id: null,
    },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/execute',
    name: 'unknown fields, bare',
    body: { type: 'wait', ms: 0, reason: 'just because' },
    check: succeeded,
  },
  {
    route: 'POST /computers/:id/batch',
    name: 'unknown fields and nulls',
    body: {
      actions: [{ type: 'wait', ms: 0, request_id: null, extra: 1 }],
      metadata: { a: 1 },
      stop_on_error: null,
    },
    check: (response: ApiResponse<BatchResult>) => {
      expect(response.body.success, response.text).toBe(true);
      expect(response.body.results).toHaveLength(1);
    },
  },
  {
    route: 'POST /computers/:id/batch',
    name: 'an empty list',
    body: { actions: [] },
    check: (response: ApiResponse<BatchResult>) =>
      expect(response.body).toMatchObject({
        success: true,
        results: [],
        failed_index: null,
        error_message: null,
      }),
  },
  {
    route: 'POST /computers/:id/exec/sync',
    name: 'unknown fields and nulls',
    body: { command: 'echo ok', cwd: null, env: null, max_output_length: null, shell: 'bash' },
    check: (response) =>
      expect(response.body).toEqual({ stdout: 'ok\n', stderr: '', exit_code: 0 }),
  },
];

type ExecErrorCase = {
  name: string;
  body?: unknown;
  raw?: string;
  contentType?: string | null;
  message: RegExp;
};

/** POST /exec answers input it cannot start with one error line in a 200 answer. */
const EXEC_ERROR_LINES: ExecErrorCase[] = [
  { name: 'missing command', body: {}, message: /command is required/ },
  { name: 'empty command', body: { command: '' }, message: /command/ },
  { name: 'command as a number', body: { command: 5 }, message: /command/ },
  {
    name: 'timeout as a string',
    body: { command: 'true', timeout_seconds: '10' },
    message: /timeout_seconds/,
  },
  {
    name: 'timeout over an hour',
    body: { command: 'true', timeout_seconds: 3601 },
    message: /timeout_seconds must be ≤ 3600/,
  },
  { name: 'env value as a number', body: { command: 'true', env: { A: 1 } }, message: /env\.A/ },
  {
    name: 'cwd that does not exist',
    body: { command: 'true', cwd: '/nonexistent/dir' },
    message: /cwd/,
  },
  { name: 'a JSON array as the body', raw: '[1, 2]', message: /body/ },
  { name: 'no body and no Content-Type', contentType: null, message: /command is required/ },
  { name: 'empty body with Content-Type json', raw: '', message: /command is required/ },
];

let server: TestServer;
let fixtures: FixtureServer;
let live: Computer;
let spare: Computer;
let mainTab: string;

async function createComputer(body: unknown = {}): Promise<Computer> {
  const response = await server.request<Computer>('POST', '/computers', body);
  if (response.status !== 200)
    throw new Error(`create failed: ${response.status} ${response.text}`);
  return response.body;
}

async function tabsOf(id: string): Promise<Array<{ tab_id: string; is_main: boolean }>> {
  const response = await server.request<ActionResult>('GET', `/computers/${id}/tabs`);
  return response.body.result.tabs as Array<{ tab_id: string; is_main: boolean }>;
}

function pathOf(c: {
  route: Route;
  id?: string;
  tab?: string;
  screenshot?: { computer: string; file: string };
  query?: string;
}) {
  const [method, template] = c.route.split(' ') as [string, string];
  const id =
    c.id === undefined || c.id === 'live'
      ? live.id
      : c.id === 'spare'
        ? spare.id
        : c.id === 'unknown'
          ? UNKNOWN_COMPUTER
          : c.id;
  const path = template
    .replace(':id', id)
    .replace(':tab_id', c.tab === 'unknown' ? UNKNOWN_TAB : mainTab)
    .replace(':computer', c.screenshot?.computer ?? 'comp_x')
    .replace(':file', c.screenshot?.file ?? 'x.png')
    .replace(':name', 'NO_SUCH_SECRET');
  return { method, path: path + (c.query ?? '') };
}

/** The contract's error body, with the status and code expected. */
function expectError(response: ApiResponse, expected: Expected): void {
  const context = `${response.status} ${response.text.slice(0, 300)}`;
  expect(response.status, context).toBe(expected.status);
  expect(response.status, context).not.toBe(409);
  expect(response.status, context).toBeLessThan(500);
  expect(response.headers.get('content-type'), context).toMatch(/^application\/json/);
  const body = response.body as Record<string, unknown> | undefined;
  expect(body, context).toBeTypeOf('object');
  expect(body!.message, context).toBeTypeOf('string');
  expect((body!.message as string).trim().length, context).toBeGreaterThan(0);
  expect(body!.message, context).not.toMatch(/^\s*[[{]/);
  expect(body!.code, context).toBe(expected.code);
  expect(body!.request_id, context).toBeTypeOf('string');
  expect(body!.request_id as string, context).toMatch(/^req_/);
  if (expected.param === null) expect(body!.param, context).toBeUndefined();
  else if (expected.param !== undefined) expect(body!.param, context).toBe(expected.param);
  if (expected.message) expect(body!.message, context).toMatch(expected.message);
}

beforeAll(async () => {
  [server, fixtures] = await Promise.all([startTestServer(), startFixtureServer()]);
  [live, spare] = await Promise.all([createComputer(), createComputer()]);
  mainTab = (await tabsOf(live.id)).find((tab) => tab.is_main)!.tab_id;
});

afterAll(async () => {
  await server?.close();
  await fixtures?.close();
});

describe('the table', () => {
  it('names every route the server has', async () => {
    const response = await server.request<{ paths: Record<string, Record<string, unknown>> }>(
      'GET',
      '/openapi.json',
    );
    const served = Object.entries(response.body.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map(
        (method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`,
      ),
    );
    expect(new Set(served)).toEqual(new Set(ROUTES));
  });

  it('has a case for every route', () => {
    const covered = new Set<string>([
      ...CASES.map((c) => c.route),
      ...ACCEPTED.map((c) => c.route),
    ]);
    expect(ROUTES.filter((route) => !covered.has(route))).toEqual([]);
  });
});

describe('bad input is refused with the error body of docs/API.md §11', () => {
  it.each(CASES.map((c) => [`${c.route} — ${c.name}`, c] as const))('%s', async (_label, c) => {
    const { method, path } = pathOf(c);
    const response = await server.request(method, path, c.body, {
      raw: c.raw,
      contentType: c.contentType,
    });
    expectError(response, c);
  });
});

describe('POST /computers/{id}/exec answers bad input with one error line, status 200', () => {
  it.each(EXEC_ERROR_LINES.map((c) => [c.name, c] as const))('%s', async (_label, c) => {
    const response = await server.request('POST', `/computers/${live.id}/exec`, c.body, {
      raw: c.raw,
      contentType: c.contentType,
    });
    expect(response.status, response.text).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(response.text.endsWith('\n')).toBe(true);
    const lines = response.text.slice(0, -1).split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      type: 'error',
      code: 'invalid_request',
      message: expect.stringMatching(c.message),
    });
  });

  it('unknown fields and nulls are accepted', async () => {
    const response = await server.request('POST', `/computers/${live.id}/exec`, {
      command: 'true',
      cwd: null,
      env: null,
      tty: true,
    });
    expect(response.text).toBe('{"type":"exit","code":0}\n');
  });
});

describe('unknown fields, nulls and empty bodies are accepted', () => {
  it.each(ACCEPTED.map((c) => [`${c.route} — ${c.name}`, c] as const))('%s', async (_label, c) => {
    const { method, path } = pathOf(c);
    const response = await server.request(method, path, c.body, {
      raw: c.raw,
      contentType: c.contentType,
      headers: c.headers,
    });
    expect(response.status, response.text).toBe(c.status ?? 200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.body, response.text).toBeTypeOf('object');
    c.check?.(response);
  });

  it('POST /computers with unknown fields and null values creates a computer with the defaults', async () => {
    const response = await server.request<Computer>('POST', '/computers', {
      kind: null,
      display: null,
      max_lifetime_seconds: null,
      context_id: null,
      environment_id: null,
      region: 'mars',
      metadata: { owner: 'test' },
    });
    try {
      expect(response.status, response.text).toBe(200);
      expect(response.body).toMatchObject({
        kind: 'browser',
        status: 'running',
        display: { width: 1280, height: 720, scale: 1 },
        max_lifetime_seconds: null,
        context_id: null,
        environment_id: null,
      });
    } finally {
      if (response.body?.id) await server.request('DELETE', `/computers/${response.body.id}`);
    }
  });

  it('POST /computers/{id}/tabs with unknown fields and a null url opens about:blank', async () => {
    const response = await server.request<ActionResult>('POST', `/computers/${live.id}/tabs`, {
      url: null,
      foo: 1,
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.status).toBe('success');
    const created = response.body.result.created_tab_id as string;
    expect(created).toMatch(/^tab_/);
    const closed = await server.request<ActionResult>(
      'DELETE',
      `/computers/${live.id}/tabs/${created}`,
    );
    expect(closed.status, closed.text).toBe(200);
    const main = (await tabsOf(live.id)).find((tab) => tab.is_main);
    expect(main?.tab_id).toBe(mainTab);
  });

  it('DELETE /computers/{id} with an empty JSON body succeeds', async () => {
    const computer = await createComputer();
    const response = await server.request('DELETE', `/computers/${computer.id}`, undefined, {
      raw: '',
    });
    expect(response.status, response.text).toBe(204);
    const after = await server.request<Computer>('GET', `/computers/${computer.id}`);
    expect(after.body.status).toBe('terminated');
  });
});

describe('a batch that fails validation runs nothing', () => {
  let computer: Computer;

  beforeAll(async () => {
    computer = await createComputer();
    const navigated = await server.request<ActionResult>(
      'POST',
      `/computers/${computer.id}/navigate`,
      {
        url: `${fixtures.url}/actions.html`,
      },
    );
    expect(navigated.body.status, navigated.text).toBe('success');
  });

  afterAll(async () => {
    if (computer) await server.request('DELETE', `/computers/${computer.id}`);
  });

  const click = { type: 'click', x: 150, y: 150 };
  const clicks = async () =>
    (await pageState(server, computer.id)).events.filter((event) => event.startsWith('click'));

  it('an unknown type at index 1 leaves index 0 unrun', async () => {
    const response = await server.request('POST', `/computers/${computer.id}/batch`, {
      actions: [click, { type: 'fly' }],
    });
    expectError(response, { status: 400, code: 'invalid_request', param: 'actions.1.type' });
    expect(await clicks()).toEqual([]);
  });

  it('an unknown key name at index 1 leaves index 0 unrun', async () => {
    const response = await server.request('POST', `/computers/${computer.id}/batch`, {
      actions: [click, { type: 'keypress', keys: ['nokey'] }],
    });
    expectError(response, { status: 400, code: 'invalid_request', param: 'actions.1.keys.0' });
    expect(await clicks()).toEqual([]);
  });

  it('a batch of 501 actions runs none of them', async () => {
    const response = await server.request('POST', `/computers/${computer.id}/batch`, {
      actions: Array.from({ length: 501 }, () => click),
    });
    expectError(response, { status: 400, code: 'invalid_request', param: 'actions' });
    expect(await clicks()).toEqual([]);
  });

  it('the same batch, valid, does click (the check above can see a click)', async () => {
    const response = await server.request<BatchResult>('POST', `/computers/${computer.id}/batch`, {
      actions: [click, { type: 'wait', ms: 0 }],
    });
    expect(response.status, response.text).toBe(200);
    expect(response.body.success).toBe(true);
    expect(await clicks()).toEqual(['click 150,150 left detail=1 on target']);
  });
});

describe('after all of that', () => {
  it('the server still serves: health, and actions on the same computer', async () => {
    const health = await server.request('GET', '/health', undefined, { key: null });
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok' });

    const status = await server.request<Computer>('GET', `/computers/${live.id}`);
    expect(status.body.status).toBe('running');
    const shot = await server.request<ActionResult>('POST', `/computers/${live.id}/screenshot`, {});
    expect(shot.status, shot.text).toBe(200);
    expect(shot.body.status).toBe('success');
    const click = await server.request<ActionResult>('POST', `/computers/${live.id}/click`, {
      x: 5,
      y: 5,
    });
    expect(click.status, click.text).toBe(200);
    expect(click.body.status).toBe('success');

    const spareStatus = await server.request<Computer>('GET', `/computers/${spare.id}`);
    expect(spareStatus.body.status).toBe('running');
  });
});
