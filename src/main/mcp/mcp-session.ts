import type { Core } from '../core/create-core.js';
import { ToolRefusal } from './mcp-results.js';

/**
 * What one MCP session acts as and on: its key's organization, and its current computer, which
 * only this session's calls change, so clients never act on each other's computers.
 */
export class McpSession {
  private current: string | undefined;

  constructor(
    readonly core: Core,
    readonly org: string,
    /** Who the client is, as an approval of its call names it (see requesterName). */
    readonly requester: () => string,
  ) {}

  /** The current computer's id; a call that needs one before there is one is refused. */
  computerId(): string {
    if (this.current === undefined) {
      throw new ToolRefusal(
        'there is no current computer: call create_computer, or list_computers then use_computer',
      );
    }
    return this.current;
  }

  currentId(): string | undefined {
    return this.current;
  }

  use(id: string | undefined): void {
    this.current = id;
  }
}
