import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, { type Router } from 'express';
import type { Core } from '../core/create-core.js';
import type { Principal } from '../core/store/key-store.js';
import { createMcpServer } from '../mcp/mcp-server.js';
import { sendError } from './errors.js';

/**
 * A session with no stream open (the client's GET) and no request for this long is closed: its
 * client went without a DELETE. A connected client keeps its GET stream open, however idle.
 */
const IDLE_SESSION_MS = 30 * 60_000;

type Session = {
  org: string;
  transport: StreamableHTTPServerTransport;
  lastUsed: number;
  /** Requests under way, the client's GET stream among them. */
  open: number;
};

export type McpEndpoint = { router: Router; close(): Promise<void> };

/**
 * MCP over Streamable HTTP at /mcp, behind the same key check as every route: a session belongs
 * to the organization of the key that opened it, and a key of another organization cannot use
 * its id. Each session has its own server, hence its own current computer.
 */
export function mcpEndpoint(core: Core, log: (message: string) => void): McpEndpoint {
  const sessions = new Map<string, Session>();
  const router = express.Router();

  const open = async ({ org, keyPrefix }: Principal): Promise<StreamableHTTPServerTransport> => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { org, transport, lastUsed: Date.now(), open: 0 });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    transport.onerror = (error) => log(`mcp: ${error.message}`);
    await createMcpServer(core, org, keyPrefix).connect(transport);
    return transport;
  };

  router.all('/mcp', async (req, res, next) => {
    try {
      const principal = res.locals.principal as Principal;
      const { org } = principal;
      const id = req.headers['mcp-session-id'];
      if (typeof id === 'string') {
        const session = sessions.get(id);
        // Another organization's session id reads as unknown: its existence is not revealed.
        if (!session || session.org !== org) {
          return sendError(
            res,
            'not_found',
            'no such MCP session (it was closed or expired); start a new one with initialize',
          );
        }
        session.open += 1;
        res.once('close', () => {
          session.open -= 1;
          session.lastUsed = Date.now();
        });
        return await session.transport.handleRequest(req, res, req.body);
      }
      if (req.method !== 'POST' || !isInitializeRequest(req.body)) {
        return sendError(
          res,
          'invalid_request',
          'no mcp-session-id header: a new MCP session starts with an initialize request',
        );
      }
      const transport = await open(principal);
      await transport.handleRequest(req, res, req.body);
    } catch (error) {
      next(error);
    }
  });

  const sweep = setInterval(() => {
    const cutoff = Date.now() - IDLE_SESSION_MS;
    for (const session of sessions.values()) {
      if (session.open === 0 && session.lastUsed < cutoff) void session.transport.close();
    }
  }, 60_000);
  sweep.unref();

  return {
    router,
    async close() {
      clearInterval(sweep);
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
    },
  };
}
