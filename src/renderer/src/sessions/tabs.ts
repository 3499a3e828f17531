import type { ActionResult } from '../../../shared/actions.js';
import type { Api } from '../api/client.js';

/** One tab as GET /computers/{id}/tabs lists it. */
export type Tab = { tab_id: string; url: string; title: string; is_main: boolean };

export async function listTabs(api: Api, computerId: string): Promise<Tab[]> {
  const answer = await api.get<ActionResult>(`/computers/${computerId}/tabs`);
  return (answer.result.tabs as Tab[] | undefined) ?? [];
}

export async function countTabs(api: Api, computerId: string): Promise<number> {
  return (await listTabs(api, computerId)).length;
}
