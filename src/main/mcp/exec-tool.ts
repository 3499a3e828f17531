import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ExecSyncBody, MAX_EXEC_TIMEOUT_SECONDS } from '../../shared/exec.js';
import { newId } from '../core/ids.js';
import { decisionPrefix, whileWatchingApprovals } from './act.js';
import { answer, guarded } from './mcp-results.js';
import type { McpSession } from './mcp-session.js';

/** exec: a shell command on the current computer, through the same gate as POST /exec/sync. */
export function registerExecTool(server: McpServer, session: McpSession): void {
  const { core, org } = session;
  server.registerTool(
    'exec',
    {
      description:
        "Run a shell command (sh -c) on the current computer, in the computer's workspace folder " +
        'unless cwd says otherwise, and return its exit code, stdout and stderr.',
      inputSchema: {
        command: z.string().min(1).max(100_000),
        cwd: z.string().max(4096).optional(),
        timeout_seconds: z.number().positive().max(MAX_EXEC_TIMEOUT_SECONDS).default(120),
      },
    },
    ({ command, cwd, timeout_seconds }, extra) =>
      guarded(async () => {
        const id = session.computerId();
        const body = ExecSyncBody.parse({ command, cwd, timeout_seconds });
        const outcome = await whileWatchingApprovals(session, id, extra, async () => {
          const run = await core.computers.exec(org, id, 'exec_sync', body, {
            requestId: newId('req'),
            retried: false,
            requester: session.requester(),
            signal: extra.signal,
          });
          return await run.outcome();
        });
        const { stdout, stderr, exitCode, truncated } = outcome;
        const result = {
          exit_code: exitCode,
          stdout,
          stderr,
          ...(truncated && { truncated: true }),
        };
        // A command that ran and failed is still a completed call: its exit code is the answer.
        return answer(`${decisionPrefix(outcome)}The command exited with ${exitCode}.`, result);
      }),
  );
}
