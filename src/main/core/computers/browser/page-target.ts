import type { CDPSession } from 'playwright-core';
import type { ApprovalTarget } from '../../../../shared/approvals.js';
import type { Point } from '../action.js';

type AxValue = { value?: unknown };
type AxNode = {
  nodeId: string;
  ignored?: boolean;
  role?: AxValue;
  name?: AxValue;
  properties?: Array<{ name: string; value: AxValue }>;
  parentId?: string;
  backendDOMNodeId?: number;
};

/** Roles that only wrap what a person would name: the element acted on is further up. */
const WRAPPERS = new Set([
  'generic',
  'none',
  'presentation',
  'StaticText',
  'InlineTextBox',
  'LineBreak',
  'paragraph',
  'image',
  'img',
  'LabelText',
]);
const MAX_ANCESTORS = 8;

/**
 * The element under `at` (or focused, when `at` is undefined): its role and accessible name as
 * Chromium computes them for assistive technology, its tag, input type and a link's destination.
 * Read over CDP (the DOM and accessibility domains), so a page's own scripts cannot dress up what
 * a policy sees. Null when there is no element there.
 */
export async function readTarget(
  cdp: CDPSession,
  at: Point | undefined,
): Promise<ApprovalTarget | null> {
  const backendNodeId = at ? await nodeAt(cdp, at) : await focusedNode(cdp);
  if (backendNodeId === undefined) return null;
  const { nodes } = (await cdp.send('Accessibility.getPartialAXTree', {
    backendNodeId,
    fetchRelatives: true,
  })) as { nodes: AxNode[] };
  const node = actedOn(nodes, backendNodeId);
  const domId = node?.backendDOMNodeId ?? backendNodeId;
  const { node: dom } = (await cdp.send('DOM.describeNode', { backendNodeId: domId })) as {
    node: { nodeName: string; attributes?: string[] };
  };
  const attributes = pairs(dom.attributes ?? []);
  const url = node?.properties?.find((property) => property.name === 'url')?.value.value;
  return {
    role: text(node?.role?.value),
    name: text(node?.name?.value),
    input_type: dom.nodeName === 'INPUT' ? (attributes.type ?? 'text').toLowerCase() : null,
    tag: dom.nodeName.toLowerCase(),
    href: typeof url === 'string' && url ? url : null,
    x: at?.x ?? null,
    y: at?.y ?? null,
  };
}

async function nodeAt(cdp: CDPSession, at: Point): Promise<number | undefined> {
  try {
    const { backendNodeId } = await cdp.send('DOM.getNodeForLocation', {
      x: Math.round(at.x),
      y: Math.round(at.y),
      includeUserAgentShadowDOM: false,
      ignorePointerEventsNone: false,
    });
    return backendNodeId;
  } catch {
    // Outside the page, or over nothing.
    return undefined;
  }
}

/** The focused element, through open shadow roots; undefined when it is the body. */
async function focusedNode(cdp: CDPSession): Promise<number | undefined> {
  const { result } = await cdp.send('Runtime.evaluate', {
    expression: `(() => { let e = document.activeElement;
      while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
      return e === document.body ? null : e; })()`,
  });
  if (!result.objectId) return undefined;
  const { node } = await cdp.send('DOM.describeNode', { objectId: result.objectId });
  void cdp.send('Runtime.releaseObject', { objectId: result.objectId }).catch(() => {});
  return node.backendNodeId;
}

/** From the node under the point up to the first ancestor that is more than a wrapper. */
function actedOn(nodes: AxNode[], backendNodeId: number): AxNode | undefined {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  let node = nodes.find((candidate) => candidate.backendDOMNodeId === backendNodeId);
  const first = node;
  for (let depth = 0; node && depth < MAX_ANCESTORS; depth++) {
    const role = text(node.role?.value);
    if (!node.ignored && role && !WRAPPERS.has(role)) return node;
    node = node.parentId ? byId.get(node.parentId) : undefined;
  }
  return first;
}

function pairs(list: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) out[list[i]!.toLowerCase()] = list[i + 1]!;
  return out;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value.trim().slice(0, 200) : null;
}
