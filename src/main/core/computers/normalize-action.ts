import { DRAG_ENDS, type ComputerAction } from '../../../shared/actions.js';
import { invalidRequest } from '../errors.js';
import { newId } from '../ids.js';
import type { Action, ActionRequest, MouseButton, Point } from './action.js';
import { parseChord, parseKeyCombo } from '../keyboard/key-names.js';

/**
 * Turns a validated wire action (any alias) into the internal action, checking what the schema
 * cannot (key names, URLs). Errors name the action's own fields (`['url']`, `['keys', 0]`).
 */
export function normalizeAction(wire: ComputerAction): ActionRequest {
  return {
    action: toAction(wire),
    tabId: 'tab_id' in wire && !isTabTarget(wire) ? wire.tab_id : undefined,
    requestId: wire.request_id ?? newId('req'),
    includeContext: wire.include_context ?? false,
  };
}

function isTabTarget(wire: ComputerAction): boolean {
  return wire.type === 'switch_tab' || wire.type === 'close_tab';
}

function toAction(wire: ComputerAction): Action {
  const at = (w: Point): Point => ({ x: w.x, y: w.y });
  switch (wire.type) {
    case 'click':
      return { type: 'click', at: at(wire), button: button(wire.button), count: 1 };
    case 'double_click':
      return { type: 'click', at: at(wire), button: 'left', count: 2 };
    case 'triple_click':
      return { type: 'click', at: at(wire), button: 'left', count: 3 };
    case 'right_click':
      return { type: 'click', at: at(wire), button: 'right', count: 1 };
    case 'mouse_down':
    case 'mouse_up':
      return { type: wire.type, at: at(wire), button: button(wire.button) };
    case 'move':
      return { type: 'move', at: at(wire) };
    case 'drag':
      return { type: 'drag', path: wire.path ?? dragEnds(wire) };
    case 'scroll':
    case 'hscroll': {
      const dx = wire.dx ?? wire.scroll_x ?? 0;
      const dy = wire.type === 'hscroll' ? 0 : (wire.dy ?? wire.scroll_y ?? 0);
      return { type: 'scroll', at: at(wire), dx, dy };
    }
    case 'type':
      return wire.x !== undefined && wire.y !== undefined
        ? { type: 'point_and_type', at: at(wire as Point), text: wire.text }
        : { type: 'type', text: wire.text };
    case 'point_and_type':
      return { type: 'point_and_type', at: at(wire), text: wire.text };
    case 'keypress':
    case 'hotkey':
      return { type: 'keypress', keys: parseChord(wire.keys, 'keys') };
    case 'key':
      return wire.keys
        ? { type: 'keypress', keys: parseChord(wire.keys, 'keys') }
        : { type: 'keypress', keys: parseKeyCombo(wire.key!, 'key') };
    case 'key_down':
    case 'key_up':
      return { type: wire.type, key: singleKey(wire) };
    case 'wait':
      return { type: 'wait', ms: wire.ms };
    case 'screenshot':
      return { type: 'screenshot', base64: wire.base64 ?? false };
    case 'go_to_url':
    case 'navigate':
      return { type: 'navigate', url: normalizeUrl(wire.url, 'url') };
    case 'get_html_content':
      return { type: 'html' };
    case 'set_viewport':
      return { type: 'viewport', width: wire.width, height: wire.height, scale: wire.scale_factor };
    case 'change_proxy':
      return { type: 'change_proxy', proxyUrl: checkProxyUrl(wire.proxy_url, 'proxy_url') };
    case 'list_tabs':
      return { type: 'list_tabs' };
    case 'new_tab':
      return { type: 'new_tab', url: wire.url && normalizeUrl(wire.url, 'url') };
    // Their schemas make tab_id required; the generic schema type only sees the optional common field.
    case 'switch_tab':
      return { type: 'switch_tab', tabId: wire.tab_id! };
    case 'close_tab':
      return { type: 'close_tab', tabId: wire.tab_id! };
    case 'debug':
      return { type: 'debug', command: wire.debug };
    case 'terminate':
    case 'answer':
    case 'done':
      return { type: 'finish', signal: wire.type, status: wire.status, result: wire.result };
  }
}

/** A drag's two ends, however they were spelled (the schema made sure one spelling is whole). */
function dragEnds(wire: Partial<Record<(typeof DRAG_ENDS)[number][number], number>>): Point[] {
  const [x1, y1, x2, y2] = DRAG_ENDS.find((fields) => fields.every((f) => wire[f] !== undefined))!;
  return [
    { x: wire[x1]!, y: wire[y1]! },
    { x: wire[x2]!, y: wire[y2]! },
  ];
}

function button(name: string | undefined): MouseButton {
  return name === undefined ? 'left' : name === 'wheel' ? 'middle' : (name as MouseButton);
}

function singleKey(wire: { key?: string; keys?: string[] }): string {
  const [field, name] = wire.key !== undefined ? ['key', wire.key] : ['keys.0', wire.keys![0]!];
  const keys = parseKeyCombo(name, field);
  if (keys.length !== 1) {
    throw invalidRequest(`${field} must name one key, not the combination "${name}"`, field);
  }
  return keys[0]!;
}

const NAVIGABLE = new Set(['http:', 'https:', 'about:', 'data:']);

/**
 * "localhost:3000" or "example.com:8443/x": a host and port, not a scheme named localhost.
 * A name without a dot before the port stays a scheme ("javascript:1" is refused as one).
 */
const HOST_AND_PORT = /^(?:localhost|[^\s/:]*\.[^\s/:]*):\d+(?:[/?#]|$)/i;
/** Hosts a browser opens over http when none is typed: this machine and the local network. */
const LOCAL_HOST = /^(?:localhost|[^.]+|.+\.localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;

/**
 * Accepts an address without a scheme, as people and models write it: "example.com" is
 * https://example.com; "localhost:3000", "127.0.0.1:8765/x", an intranet name without a dot or
 * an IP address is opened over http, as a browser's address bar does (they rarely serve https).
 */
function withScheme(text: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(text) && !HOST_AND_PORT.test(text)) return text;
  const host = text.match(/^(\[[^\]]*\]|[^/:?#]*)/)![1]!;
  return `${LOCAL_HOST.test(host) ? 'http' : 'https'}://${text}`;
}

function normalizeUrl(raw: string, param: string): string {
  const text = raw.trim();
  let url: URL;
  try {
    url = new URL(withScheme(text));
  } catch {
    throw invalidRequest(`"${raw}" is not a valid URL`, param);
  }
  if (!NAVIGABLE.has(url.protocol)) {
    throw invalidRequest(
      `URLs with scheme ${url.protocol} cannot be opened; use http, https, about or data`,
      param,
    );
  }
  return url.href;
}

const PROXY_SCHEMES = new Set(['http:', 'https:', 'socks5:', 'socks4:']);

function checkProxyUrl(raw: string, param: string): string {
  if (raw === '') return raw;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalidRequest(
      'proxy_url is not a valid URL; use e.g. http://user:pass@host:port',
      param,
    );
  }
  if (!PROXY_SCHEMES.has(url.protocol) || !url.hostname) {
    throw invalidRequest('proxy_url must be http://, https:// or socks5:// with a host', param);
  }
  return raw;
}
