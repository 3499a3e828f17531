import { z } from 'zod';
import { ExecBody, ExecLine, ExecSyncBody, ExecSyncResult } from '../../../shared/exec.js';
import type { Core } from '../../core/create-core.js';
import { BenchtopError } from '../../core/errors.js';
import type { CommandRun } from '../../core/shell/command-run.js';
import { NdjsonWriter } from '../ndjson.js';
import type { Routes } from '../route-spec.js';
import { parseWith } from '../validate.js';

export function execRoutes(routes: Routes, core: Core): void {
  const tag = 'shell';

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/exec',
      tag,
      summary:
        'Run a shell command, streaming its output as NDJSON lines and ending with its exit code',
      body: z.unknown(),
      bodyDoc: ExecBody,
      response: ExecLine,
      produces: 'application/x-ndjson',
    },
    async ({ body, params, principal, requestId, retried, res }) => {
      const session = core.computers.getRunning(principal.org, params.id!);
      const out = new NdjsonWriter(res);
      let run: CommandRun;
      try {
        run = await core.shell.start(session, 'exec', parseWith(ExecBody, body), {
          requestId,
          retried,
        });
      } catch (error) {
        // Bad input is an error line in a 200 answer; other refusals keep their status.
        if (!(error instanceof BenchtopError && error.code === 'invalid_request')) throw error;
        return out.only({ type: 'error', code: 'invalid_request', message: error.message });
      }
      out.open();
      await run.follow((line) => out.write(line), out.closed);
      out.end();
    },
  );

  routes.add(
    {
      method: 'post',
      path: '/computers/:id/exec/sync',
      tag,
      summary: 'Run a shell command and answer its output and exit code once it ends',
      body: ExecSyncBody,
      response: ExecSyncResult,
    },
    async ({ body, params, principal, requestId, retried }): Promise<ExecSyncResult> => {
      const session = core.computers.getRunning(principal.org, params.id!);
      const run = await core.shell.start(session, 'exec_sync', body, { requestId, retried });
      const { stdout, stderr, exitCode, truncated } = await run.outcome();
      return {
        stdout,
        stderr,
        exit_code: exitCode,
        ...(truncated && { truncated: true as const }),
      };
    },
  );
}
