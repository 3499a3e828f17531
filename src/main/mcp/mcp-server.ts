import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Core } from '../core/create-core.js';
import packageJson from '../../../package.json' with { type: 'json' };
import { registerActionTools } from './action-tools.js';
import { registerComputerTools } from './computer-tools.js';
import { requesterName } from '../../shared/requester.js';
import { McpSession } from './mcp-session.js';
import { registerTaskTools } from './task-tools.js';

const INSTRUCTIONS =
  'Benchtop runs computers (Chromium browsers and Linux desktops) for you. Start with ' +
  'create_computer (or list_computers and use_computer): it becomes the current computer, and ' +
  'click, type, key, scroll, drag, navigate, screenshot, html, tabs and exec act on it. Take a ' +
  'screenshot to see the screen; coordinates are its pixels. Some actions may wait for a person ' +
  'to approve them. start_task hands a whole instruction to an agent that works on its own.';

/**
 * One MCP session's server: the tools map onto the same core calls as the REST routes, for one
 * organization, with the session's own current computer. A transport connects it to one client.
 * `keyPrefix`: of the key the client uses (none for the stdio server of the machine's owner).
 */
export function createMcpServer(core: Core, org: string, keyPrefix?: string): McpServer {
  const server = new McpServer(
    { name: 'benchtop', version: packageJson.version },
    { capabilities: { logging: {} }, instructions: INSTRUCTIONS },
  );
  const session = new McpSession(core, org, () => {
    const client = server.server.getClientVersion();
    return requesterName(client && `MCP client ${client.name} ${client.version}`, keyPrefix);
  });
  registerComputerTools(server, session);
  registerActionTools(server, session);
  registerTaskTools(server, session);
  return server;
}
