import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { ComputerAction } from '../../shared/actions.js';
import { act, decisionPrefix, type ToolExtra } from './act.js';
import { actionAnswer, answer, failure, guarded } from './mcp-results.js';
import { registerExecTool } from './exec-tool.js';
import type { McpSession } from './mcp-session.js';

const X = z.number().describe('Pixels from the left edge of the screen (see screenshot).');
const Y = z.number().describe('Pixels from the top edge of the screen.');

/** Registers a tool that performs one action on the current computer and says what it did. */
function actionTool<S extends z.ZodRawShape>(
  server: McpServer,
  session: McpSession,
  name: string,
  description: string,
  inputSchema: S,
  toAction: (args: z.infer<z.ZodObject<S>>) => { action: ComputerAction; done: string },
): void {
  const run = (args: z.infer<z.ZodObject<S>>, extra: ToolExtra) =>
    guarded(async () => {
      const { action, done } = toAction(args);
      const result = await act(session, action, extra);
      return actionAnswer(`${decisionPrefix(result)}${done}`, result);
    });
  // The SDK types a callback by the shape it is given; for a shape generic here TypeScript cannot
  // match its parsed arguments to z.infer, though they are the same object.
  server.registerTool(name, { description, inputSchema }, run as never);
}

export function registerActionTools(server: McpServer, session: McpSession): void {
  const tool = <S extends z.ZodRawShape>(
    name: string,
    description: string,
    schema: S,
    toAction: (args: z.infer<z.ZodObject<S>>) => { action: ComputerAction; done: string },
  ) => actionTool(server, session, name, description, schema, toAction);

  tool(
    'click',
    "Click at a point of the current computer's screen (coordinates as in its screenshot).",
    { x: X, y: Y, button: z.enum(['left', 'right', 'middle']).default('left') },
    ({ x, y, button }) => ({
      action: { type: 'click', x, y, button },
      done: `Clicked ${button} at (${x}, ${y}).`,
    }),
  );
  tool('double_click', 'Double-click at a point of the screen.', { x: X, y: Y }, ({ x, y }) => ({
    action: { type: 'double_click', x, y },
    done: `Double-clicked at (${x}, ${y}).`,
  }));
  tool(
    'type',
    'Type text into whatever has the keyboard focus (click a field first). ' +
      '{{secret:NAME}} types a secret stored in Benchtop without it appearing anywhere.',
    { text: z.string().max(100_000) },
    ({ text }) => ({ action: { type: 'type', text }, done: `Typed ${text.length} character(s).` }),
  );
  tool(
    'key',
    'Press a key or a combination, e.g. "Enter", "Tab", "ctrl+a", "ctrl+shift+t".',
    { key: z.string().min(1).max(100) },
    ({ key }) => ({ action: { type: 'key', key }, done: `Pressed ${key}.` }),
  );
  tool(
    'scroll',
    'Scroll with the mouse wheel at a point: dy > 0 scrolls down, dx > 0 right (pixels).',
    { x: X, y: Y, dx: z.number().default(0), dy: z.number().default(0) },
    ({ x, y, dx, dy }) => ({
      action: { type: 'scroll', x, y, dx, dy },
      done: `Scrolled by (${dx}, ${dy}) at (${x}, ${y}).`,
    }),
  );
  tool(
    'drag',
    'Press the left button at (x1, y1), move to (x2, y2) and release.',
    { x1: X, y1: Y, x2: X, y2: Y },
    ({ x1, y1, x2, y2 }) => ({
      action: { type: 'drag', x1, y1, x2, y2 },
      done: `Dragged from (${x1}, ${y1}) to (${x2}, ${y2}).`,
    }),
  );
  tool(
    'navigate',
    "Open a URL in the current browser computer's active tab and wait for it to load.",
    { url: z.string().min(1).max(8192) },
    ({ url }) => ({ action: { type: 'navigate', url }, done: 'Navigated.' }),
  );
  server.registerTool(
    'html',
    {
      description:
        "The HTML of the current browser computer's active tab, after the URL and the title.",
    },
    (extra) =>
      guarded(async () => {
        const result = await act(session, { type: 'get_html_content' }, extra);
        if (result.status === 'error') return failure(result.error_message);
        const { url, title, html_content } = result.result;
        return answer(`URL: ${url}\nTitle: ${title}\n\n${html_content}`);
      }),
  );

  server.registerTool(
    'screenshot',
    {
      description:
        "A PNG of the current computer's screen. Coordinates for click and the other tools are " +
        'pixels of this image.',
    },
    (extra) =>
      guarded(async () => {
        const result = await act(session, { type: 'screenshot', base64: true }, extra);
        if (result.status === 'error') return failure(result.error_message);
        const { width, height, base64 } = result.result;
        if (!base64 || width === undefined) return failure('the screenshot came back empty');
        return {
          content: [
            { type: 'image', data: base64, mimeType: 'image/png' },
            {
              type: 'text',
              text: `Screenshot of computer ${session.computerId()}, ${width}x${height}.`,
            },
          ],
        };
      }),
  );

  server.registerTool(
    'tabs',
    {
      description:
        'Tabs of the current browser computer: "list" them, "open" one (optional url; it becomes ' +
        'active), "switch" to one or "close" one by tab_id.',
      inputSchema: {
        action: z.enum(['list', 'open', 'switch', 'close']).default('list'),
        tab_id: z.string().min(1).max(200).optional().describe('For switch and close.'),
        url: z.string().min(1).max(8192).optional().describe('For open.'),
      },
    },
    ({ action, tab_id, url }, extra) =>
      guarded(async () => {
        if ((action === 'switch' || action === 'close') && !tab_id) {
          return failure(`tab_id is required to ${action} a tab; "list" shows the tabs' ids`);
        }
        const request: ComputerAction =
          action === 'list'
            ? { type: 'list_tabs' }
            : action === 'open'
              ? { type: 'new_tab', url }
              : { type: action === 'switch' ? 'switch_tab' : 'close_tab', tab_id: tab_id! };
        const result = await act(session, request, extra);
        return actionAnswer(`${decisionPrefix(result)}Tabs (${action}):`, result);
      }),
  );

  registerExecTool(server, session);
}
