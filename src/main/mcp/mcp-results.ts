import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ActionResult } from '../../shared/actions.js';
import { BenchtopError } from '../core/errors.js';

/** A tool's success: one text a model reads, with the data as JSON below the sentence. */
export function answer(sentence: string, data?: unknown): CallToolResult {
  const text = data === undefined ? sentence : `${sentence}\n${JSON.stringify(data, null, 2)}`;
  return { content: [{ type: 'text', text }] };
}

/** A tool's failure: a result the model sees (not a protocol error), saying what to do. */
export function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** A refusal a tool raises on purpose; its message is shown as is. */
export class ToolRefusal extends Error {}

/** Core's errors name the field they are about, as the HTTP API's `param` does. */
function describe(error: unknown): string | undefined {
  if (error instanceof ToolRefusal) return error.message;
  if (error instanceof BenchtopError) {
    return error.param ? `${error.param}: ${error.message}` : error.message;
  }
  if (error instanceof z.ZodError) return z.prettifyError(error);
  return undefined;
}

/**
 * Runs a tool's work; the errors a caller can act on become error results. Anything else is a
 * fault of Benchtop and is left to the SDK, which answers it as an error result too.
 */
export async function guarded(
  work: () => CallToolResult | Promise<CallToolResult>,
): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    const message = describe(error);
    if (message === undefined) throw error;
    return failure(message);
  }
}

/** An action's answer: a status "error" (a denial among them) is a failed tool call. */
export function actionAnswer(sentence: string, result: ActionResult): CallToolResult {
  if (result.status === 'error') return failure(result.error_message);
  const data = result.result;
  return answer(sentence, Object.keys(data).length > 0 ? data : undefined);
}
