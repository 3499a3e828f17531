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
 * Read over CDP (the DOM and accessibility domains, the focus in an isolated world), so a page's
 * own scripts cannot dress up what a policy sees. Null when there is no element there.
 *
 * Two round trips to the renderer: the node, then its accessibility subtree and its description
 * side by side. A third only when the element acted on is an ancestor of the node hit (text in a
 * button), to describe it.
 */
export async function readTarget(
  cdp: CDPSession,
  at: Point | undefined,
): Promise<ApprovalTarget | null> {
  const backendNodeId = at ? await nodeAt(cdp, at) : await focusedNode(cdp);
  if (backendNodeId === undefined) return null;
  const [{ nodes }, hit] = await Promise.all([
    cdp.send('Accessibility.getPartialAXTree', { backendNodeId, fetchRelatives: true }) as Promise<{
      nodes: AxNode[];
    }>,
    describe(cdp, backendNodeId),
  ]);
  const node = actedOn(nodes, backendNodeId);
  const domId = node?.backendDOMNodeId ?? backendNodeId;
  const dom = domId === backendNodeId ? hit : await describe(cdp, domId);
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

type DomNode = { nodeName: string; attributes?: string[] };

async function describe(cdp: CDPSession, backendNodeId: number): Promise<DomNode> {
  const { node } = await cdp.send('DOM.describeNode', { backendNodeId });
  return node;
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

const FOCUSED = `(() => { let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  return e === document.body ? null : e; })()`;

/** Per CDP session (one a page), the isolated world the focus is read in. */
const worlds = new WeakMap<CDPSession, Promise<number>>();

/**
 * The focused element, through open shadow roots; undefined when it is the body. Read in an
 * isolated world: its `document.activeElement` is Chromium's, whatever the page redefines in its
 * own world. The world goes with a navigation; then one is made again.
 */
async function focusedNode(cdp: CDPSession): Promise<number | undefined> {
  let objectId: string | undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      const contextId = await isolatedWorld(cdp);
      const { result } = await cdp.send('Runtime.evaluate', { expression: FOCUSED, contextId });
      objectId = result.objectId;
      break;
    } catch (error) {
      worlds.delete(cdp);
      if (attempt > 0) throw error;
    }
  }
  if (!objectId) return undefined;
  const { node } = await cdp.send('DOM.describeNode', { objectId });
  void cdp.send('Runtime.releaseObject', { objectId }).catch(() => {});
  return node.backendNodeId;
}

function isolatedWorld(cdp: CDPSession): Promise<number> {
  let world = worlds.get(cdp);
  if (!world) {
    world = (async () => {
      const { frameTree } = await cdp.send('Page.getFrameTree');
      const { executionContextId } = await cdp.send('Page.createIsolatedWorld', {
        frameId: frameTree.frame.id,
        worldName: 'benchtop-gate',
      });
      return executionContextId;
    })();
    worlds.set(cdp, world);
  }
  return world;
}

/**
 * From the node under the point up to the first ancestor that is more than a wrapper; the node
 * itself when there is none below the page (a click on a plain block acts on that block).
 */
function actedOn(nodes: AxNode[], backendNodeId: number): AxNode | undefined {
  const byId = new Map(nodes.map((node) => [node.nodeId, node]));
  let node = nodes.find((candidate) => candidate.backendDOMNodeId === backendNodeId);
  const first = node;
  for (let depth = 0; node && depth < MAX_ANCESTORS; depth++) {
    const role = text(node.role?.value);
    if (role === 'RootWebArea') break;
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
