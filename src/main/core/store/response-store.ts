import type { InputItem, ResponseObject } from '../../../shared/responses.js';
import type { Db } from './database.js';
import type { OrgStorage } from './org-storage.js';

/**
 * Provider-private state kept with a response (say, the upstream response id), as JSON. The store
 * keeps it without reading it; only the provider that left it does.
 */
export type ProviderState = Record<string, unknown>;

export type StoredResponse = {
  org: string;
  /** The response as clients see it; its id, status and created_at are the row's. */
  body: ResponseObject;
  /** The request's input items as given (image URLs, not bytes). */
  input: InputItem[];
  /** The first response of the chain: conversations never share a scripted position. */
  conversationId: string;
  /** This response's place in its chain, from 0. */
  turn: number;
  state: ProviderState | null;
  /** Calls of the chain so far that no output answered yet. */
  openCalls: string[];
};

type Row = {
  org: string;
  body: string;
  input: string;
  conversation_id: string;
  turn: number;
  state: string | null;
  open_calls: string;
};

const MAX_CHAIN = 10_000;

/** Responses per organization, durable in SQLite; deleting removes a response for good. */
export class ResponseStore {
  private readonly statements;

  /** Without `storage` nothing is capped (tools reading a data dir). */
  constructor(
    private readonly db: Db,
    private readonly storage?: OrgStorage,
  ) {
    this.statements = {
      insert: db.prepare(
        `INSERT INTO responses (id, org, created_at, status, previous_id, conversation_id, turn,
           model, body, input, state, open_calls)
         VALUES (@id, @org, @created_at, @status, @previous_id, @conversation_id, @turn,
           @model, @body, @input, @state, @open_calls)`,
      ),
      update: db.prepare(
        `UPDATE responses SET status = @status, body = @body, state = @state,
           open_calls = @open_calls WHERE id = @id`,
      ),
      get: db.prepare('SELECT * FROM responses WHERE id = ? AND org = ?'),
      chain: db.prepare(
        `WITH RECURSIVE chain(id, depth) AS (
           SELECT id, 0 FROM responses WHERE id = ? AND org = ?
           UNION ALL
           SELECT r.previous_id, chain.depth + 1 FROM responses r JOIN chain ON r.id = chain.id
           WHERE r.previous_id IS NOT NULL AND chain.depth < ${MAX_CHAIN}
         )
         SELECT r.* FROM chain JOIN responses r ON r.id = chain.id AND r.org = ?
         ORDER BY chain.depth DESC`,
      ),
      delete: db.prepare('DELETE FROM responses WHERE id = ? AND org = ?'),
      inProgress: db.prepare("SELECT * FROM responses WHERE status = 'in_progress'"),
    };
  }

  /** Stores a new response; refused before anything is written when over a storage limit. */
  insert(response: StoredResponse): void {
    const columns = { ...this.columns(response), input: JSON.stringify(response.input) };
    // What the database's usage triggers will count for this row.
    const bytes = [columns.body, columns.input, columns.state ?? '', columns.open_calls].reduce(
      (sum, text) => sum + Buffer.byteLength(text),
      0,
    );
    this.storage?.admit(response.org, bytes, 'response', 'input');
    this.statements.insert.run({
      ...columns,
      org: response.org,
      created_at: response.body.created_at,
      previous_id: response.body.previous_response_id,
      conversation_id: response.conversationId,
      turn: response.turn,
      model: response.body.model,
    });
  }

  /** Refuses a new response at once when its organization is already at its storage quota. */
  checkRoom(org: string): void {
    this.storage?.checkRoom(org);
  }

  /** Writes what changes as a response runs: its status, body, provider state and open calls. */
  update(response: StoredResponse): void {
    this.statements.update.run(this.columns(response));
  }

  get(org: string, id: string): StoredResponse | undefined {
    const row = this.statements.get.get(id, org) as Row | undefined;
    return row && fromRow(row);
  }

  /**
   * The response and every earlier one it continues, oldest first. A deleted response ends the
   * walk: what came before it is gone with it.
   */
  chain(org: string, id: string): StoredResponse[] {
    return (this.statements.chain.all(id, org, org) as Row[]).map(fromRow);
  }

  delete(org: string, id: string): boolean {
    return this.statements.delete.run(id, org).changes > 0;
  }

  /** Responses a previous run left in progress: nothing will finish them now. */
  interrupted(): StoredResponse[] {
    return (this.statements.inProgress.all() as Row[]).map(fromRow);
  }

  private columns(response: StoredResponse) {
    return {
      id: response.body.id,
      status: response.body.status,
      body: JSON.stringify(response.body),
      state: response.state ? JSON.stringify(response.state) : null,
      open_calls: JSON.stringify(response.openCalls),
    };
  }
}

function fromRow(row: Row): StoredResponse {
  return {
    org: row.org,
    // Responses stored before `tools` was kept read as offering none.
    body: { tools: [], ...(JSON.parse(row.body) as Omit<ResponseObject, 'tools'>) },
    input: JSON.parse(row.input) as InputItem[],
    conversationId: row.conversation_id,
    turn: row.turn,
    state: row.state ? (JSON.parse(row.state) as ProviderState) : null,
    openCalls: JSON.parse(row.open_calls) as string[],
  };
}
