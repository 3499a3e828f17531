import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { CreateComputerBody, type Computer } from '../../shared/computers.js';
import { Display } from '../../shared/common.js';
import { answer, guarded } from './mcp-results.js';
import type { McpSession } from './mcp-session.js';

const ComputerId = z.string().min(1).describe('A computer id, as list_computers shows it.');

/** What a model needs of a computer; the full record is the REST API's. */
const summary = (computer: Computer, current: string | undefined) => ({
  id: computer.id,
  kind: computer.kind,
  display: `${computer.display.width}x${computer.display.height}`,
  created_at: computer.created_at,
  idle_expires_at: computer.idle_expires_at,
  live_view: computer.endpoints.live_view,
  current: computer.id === current,
});

export function registerComputerTools(server: McpServer, session: McpSession): void {
  const { core, org } = session;

  server.registerTool(
    'create_computer',
    {
      description:
        'Start a new computer and make it the current one: every action tool then acts on it. ' +
        'kind "browser" is a Chromium page (navigate, click, html, tabs); "desktop" is a Linux ' +
        'desktop with a screen, mouse, keyboard and shell. Returns its id.',
      inputSchema: {
        kind: z.enum(['browser', 'desktop']).default('browser'),
        display: Display.optional().describe('Screen size in pixels (default 1280x720).'),
      },
    },
    ({ kind, display }) =>
      guarded(async () => {
        const computer = await core.computers.create(
          org,
          CreateComputerBody.parse({ kind, display }),
        );
        session.use(computer.id);
        return answer(
          `Created ${kind} computer ${computer.id}; it is now the current computer.`,
          summary(computer, computer.id),
        );
      }),
  );

  server.registerTool(
    'list_computers',
    {
      description:
        "List the running computers this key's organization can use, the current one marked. " +
        'Use use_computer to act on one of them.',
    },
    () =>
      guarded(() => {
        const computers = core.computers.list(org);
        const current = session.currentId();
        return answer(
          computers.length === 0
            ? 'No computer is running; create one with create_computer.'
            : `${computers.length} running computer(s).`,
          computers.map((computer) => summary(computer, current)),
        );
      }),
  );

  server.registerTool(
    'use_computer',
    {
      description:
        'Make a running computer the current one (every action tool then acts on it). ' +
        'Only computers of your organization can be used.',
      inputSchema: { computer_id: ComputerId },
    },
    ({ computer_id }) =>
      guarded(() => {
        // Another organization's computer is "not found", exactly as over REST.
        const { id } = core.computers.getRunning(org, computer_id);
        session.use(id);
        return answer(`Computer ${id} is now the current computer.`);
      }),
  );

  server.registerTool(
    'delete_computer',
    {
      description:
        'Shut a computer down (default: the current one). Its recording is kept. ' +
        'Afterwards there is no current computer until create_computer or use_computer.',
      inputSchema: { computer_id: ComputerId.optional() },
    },
    ({ computer_id }) =>
      guarded(async () => {
        const id = computer_id ?? session.computerId();
        await core.computers.delete(org, id, session.requester());
        if (session.currentId() === id) session.use(undefined);
        return answer(`Computer ${id} was shut down.`);
      }),
  );
}
