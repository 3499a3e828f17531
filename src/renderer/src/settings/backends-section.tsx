import { useQuery } from '@tanstack/react-query';
import { useEffect, useState, type KeyboardEvent } from 'react';
import type { Backend } from '../../../shared/backends.js';
import {
  BrowserBackendSettings,
  type BackendType,
  type Settings,
  type SettingsPatch,
} from '../../../shared/settings.js';
import { useApi } from '../api/api-context.js';
import { backendsQuery } from '../api/queries.js';
import { RemoveButton, SaveBar, useSave, type SaveSettings } from './save-bar.js';

type Row = Settings['browser']['backends'][number];
/** `executable`: for a Playwright server, the Chromium on its machine (empty: its own). */
export type BackendDraft = { name: string; type: BackendType; url: string; executable?: string };

const TYPE_LABELS: Record<BackendType, string> = {
  local: 'this machine',
  playwright: 'Playwright server',
  selenium: 'Selenium Grid',
};
const URL_PLACEHOLDERS: Record<BackendType, string> = {
  local: '',
  playwright: 'ws://10.0.0.21:3000/',
  selenium: 'http://selenium-hub:4444',
};

/** The row a draft adds, or why it cannot be added (the settings' own rules say it). */
export function backendFromDraft(
  draft: BackendDraft,
  rows: readonly Row[],
): { row: Row } | { problem: string } {
  const name = draft.name.trim();
  if (!name) return { problem: 'Type a name for it.' };
  if (rows.some((row) => row.name === name)) return { problem: `${name} is already listed.` };
  if (draft.type === 'local' && rows.some((row) => row.type === 'local')) {
    return { problem: 'This machine is already listed.' };
  }
  const url = draft.url.trim();
  const executable = draft.executable?.trim();
  const parsed = BrowserBackendSettings.safeParse({
    name,
    type: draft.type,
    ...(draft.type !== 'local' && { url }),
    ...(draft.type === 'playwright' && executable && { executable_path: executable }),
  });
  if (!parsed.success) return { problem: capitalized(parsed.error.issues[0]!.message) };
  return { row: parsed.data };
}

/** The whole list when anything in it changed (settings replace a list whole). */
export function backendsPatch(stored: readonly Row[], rows: readonly Row[]) {
  if (JSON.stringify(stored) === JSON.stringify(rows)) return undefined;
  return { browser: { backends: [...rows] } } satisfies SettingsPatch;
}

/**
 * settings' browser.backends: this machine's Chromium, Playwright servers and Selenium Grid hubs,
 * each with its room and, once saved, whether it answers and how many computers it runs.
 */
export function BackendsSection({
  settings,
  onSave,
}: {
  settings: Settings;
  onSave: SaveSettings;
}) {
  const api = useApi();
  const listed = useQuery(backendsQuery(api));
  const stored = settings.browser.backends;
  const [rows, setRows] = useState<Row[]>(() => [...stored]);
  // After a save the list shows what is stored now.
  const storedText = JSON.stringify(stored);
  useEffect(() => setRows([...stored]), [storedText]);
  const { status, onSubmit } = useSave(onSave, () => backendsPatch(stored, rows));
  const update = (name: string, change: Partial<Row>) =>
    setRows((previous) => previous.map((row) => (row.name === name ? { ...row, ...change } : row)));

  return (
    <form className="panel" aria-labelledby="backends-title" onSubmit={onSubmit}>
      <h2 id="backends-title">Where browsers run</h2>
      <p className="muted">
        A new browser computer goes to the backend that answers and has the most room left.
        Playwright servers (<code>npx playwright run-server --port 3000</code>) and Selenium Grid 4
        hubs run browsers on other machines; this window, recordings and approvals work the same for
        them. A change applies when saved: computers on a backend you remove run on there until they
        end.
      </p>
      <table className="table backends">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Address</th>
            <th scope="col">Max computers</th>
            <th scope="col">Now</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const saved = stored.find((entry) => entry.name === row.name);
            const unsaved = JSON.stringify(saved) !== JSON.stringify(row);
            return (
              <tr key={row.name} data-backend={row.name}>
                <td>
                  {row.name}
                  {unsaved && <span className="badge">not saved yet</span>}
                </td>
                <td>{TYPE_LABELS[row.type]}</td>
                <td>
                  {row.type === 'local' ? (
                    <span className="muted">Chromium here</span>
                  ) : (
                    <>
                      <input
                        aria-label={`Address of ${row.name}`}
                        value={row.url ?? ''}
                        spellCheck={false}
                        onChange={(event) => update(row.name, { url: event.target.value })}
                      />
                      {row.executable_path && (
                        <small className="muted block">Chromium there: {row.executable_path}</small>
                      )}
                    </>
                  )}
                </td>
                <td>
                  <input
                    type="number"
                    min={1}
                    className="narrow"
                    aria-label={`Max computers on ${row.name}`}
                    value={Number.isNaN(row.max_computers) ? '' : row.max_computers}
                    onChange={(event) =>
                      update(row.name, { max_computers: event.target.valueAsNumber })
                    }
                  />
                </td>
                <td>
                  <BackendNow backend={saved && listed.data?.find((b) => b.name === row.name)} />
                </td>
                <td className="row-end">
                  <RemoveButton
                    name={row.name}
                    disabledBecause={
                      rows.length === 1 ? 'Browsers need somewhere to run' : undefined
                    }
                    onRemove={() =>
                      setRows((previous) => previous.filter((old) => old.name !== row.name))
                    }
                  />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <AddBackend rows={rows} onAdd={(row) => setRows((previous) => [...previous, row])} />
      <SaveBar label="Save backends" status={status} />
    </form>
  );
}

function BackendNow({ backend }: { backend: Backend | undefined }) {
  if (!backend) return <span className="muted">—</span>;
  if (backend.status === 'down') {
    return <span className="status status-failed">down: not answering</span>;
  }
  return (
    <span>
      <span className="status status-running">up</span> {backend.running} running
    </span>
  );
}

function AddBackend({ rows, onAdd }: { rows: readonly Row[]; onAdd: (row: Row) => void }) {
  const empty = { name: '', url: '', executable: '' };
  const [draft, setDraft] = useState<BackendDraft>({ ...empty, type: 'playwright' });
  const result = backendFromDraft(draft, rows);
  const hasLocal = rows.some((row) => row.type === 'local');
  const add = () => {
    if (!('row' in result)) return;
    onAdd(result.row);
    setDraft({ ...empty, type: draft.type });
  };
  // Enter adds the backend rather than saving the form.
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    add();
  };
  const typing = draft.name.trim() !== '' || draft.url.trim() !== '';
  return (
    <fieldset className="add-backend">
      <legend>Add a backend</legend>
      <label>
        Name
        <input
          value={draft.name}
          spellCheck={false}
          placeholder="pw-1"
          onChange={(event) => setDraft({ ...draft, name: event.target.value })}
          onKeyDown={onKeyDown}
        />
      </label>
      <label>
        Type
        <select
          value={draft.type}
          onChange={(event) => setDraft({ ...draft, type: event.target.value as BackendType })}
        >
          <option value="playwright">{TYPE_LABELS.playwright}</option>
          <option value="selenium">{TYPE_LABELS.selenium}</option>
          {!hasLocal && <option value="local">{TYPE_LABELS.local}</option>}
        </select>
      </label>
      {draft.type !== 'local' && (
        <label>
          Address
          <input
            value={draft.url}
            spellCheck={false}
            placeholder={URL_PLACEHOLDERS[draft.type]}
            onChange={(event) => setDraft({ ...draft, url: event.target.value })}
            onKeyDown={onKeyDown}
          />
        </label>
      )}
      {draft.type === 'playwright' && (
        <label>
          <span>
            Chromium on that machine <small>(optional; the server needs --unsafe)</small>
          </span>
          <input
            value={draft.executable}
            spellCheck={false}
            placeholder="its own"
            onChange={(event) => setDraft({ ...draft, executable: event.target.value })}
            onKeyDown={onKeyDown}
          />
        </label>
      )}
      <button type="button" className="secondary" disabled={!('row' in result)} onClick={add}>
        Add
      </button>
      {typing && 'problem' in result && <span className="warn">{result.problem}</span>}
    </fieldset>
  );
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1) + (text.endsWith('.') ? '' : '.');
}
