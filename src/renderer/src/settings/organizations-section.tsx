import { useEffect, useState } from 'react';
import type { Settings, SettingsPatch } from '../../../shared/settings.js';
import { RemoveButton, SaveBar, useSave, type SaveSettings } from './save-bar.js';

/** The owner's organization: exec.* governs it, and organizations.local is refused. */
const OWNER_ORG = 'local';

export type OrganizationRow = { name: string; exec: boolean; desktops: boolean; network: boolean };

export function organizationRows(organizations: Settings['organizations']): OrganizationRow[] {
  return Object.entries(organizations).map(([name, allowed]) => ({ name, ...allowed }));
}

/** Why a typed name cannot be added, or undefined when it can. */
export function organizationNameProblem(name: string, taken: string[]): string | undefined {
  const trimmed = name.trim();
  if (!trimmed) return 'Type the organization’s name.';
  if (trimmed === OWNER_ORG) {
    return 'local is you, the owner: the shell commands and sandbox settings above govern it.';
  }
  if (taken.includes(trimmed)) return `${trimmed} is already listed.`;
  return undefined;
}

/** Only what changed: a removed organization as null, a new one whole, a kept one's changes. */
export function organizationsPatch(
  stored: Settings['organizations'],
  rows: OrganizationRow[],
): SettingsPatch | undefined {
  const changes: NonNullable<SettingsPatch['organizations']> = {};
  for (const name of Object.keys(stored)) {
    if (!rows.some((row) => row.name === name)) changes[name] = null;
  }
  for (const { name, exec, desktops, network } of rows) {
    const before = stored[name];
    if (!before) {
      changes[name] = { exec, desktops, network };
      continue;
    }
    const changed: { exec?: boolean; desktops?: boolean; network?: boolean } = {};
    if (exec !== before.exec) changed.exec = exec;
    if (desktops !== before.desktops) changed.desktops = desktops;
    if (network !== before.network) changed.network = network;
    if (Object.keys(changed).length > 0) changes[name] = changed;
  }
  return Object.keys(changes).length > 0 ? { organizations: changes } : undefined;
}

/** What keys of organizations other than the owner's may do beyond browser computers. */
export function OrganizationsSection({
  settings,
  onSave,
}: {
  settings: Settings;
  onSave: SaveSettings;
}) {
  const [rows, setRows] = useState(() => organizationRows(settings.organizations));
  // After a save the list shows what is stored now.
  const stored = JSON.stringify(settings.organizations);
  useEffect(() => setRows(organizationRows(settings.organizations)), [stored]);

  const update = (name: string, change: Partial<OrganizationRow>) =>
    setRows((previous) => previous.map((row) => (row.name === name ? { ...row, ...change } : row)));
  const { status, onSubmit } = useSave(onSave, () =>
    organizationsPatch(settings.organizations, rows),
  );

  return (
    <form className="panel" aria-labelledby="organizations-title" onSubmit={onSubmit}>
      <h2 id="organizations-title">Organizations</h2>
      <p className="muted">
        Keys of other organizations always get browsers; shell commands and desktops only when
        checked here, and always in a sandbox, which shares this machine’s network unless Network is
        unchecked.
      </p>
      {rows.length === 0 ? (
        <p className="muted">No organization is allowed more than browsers.</p>
      ) : (
        <table className="table organizations">
          <thead>
            <tr>
              <th scope="col">Organization</th>
              <th scope="col">Allowed</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.name} data-organization={row.name}>
                <td>
                  {row.name}
                  {!(row.name in settings.organizations) && (
                    <span className="badge">not saved yet</span>
                  )}
                </td>
                <td>
                  <div className="allowed">
                    <label className="checkbox">
                      <input
                        type="checkbox"
                        aria-label={`Shell commands for ${row.name}`}
                        checked={row.exec}
                        onChange={(event) => update(row.name, { exec: event.target.checked })}
                      />
                      Shell commands
                    </label>
                    <label className="checkbox">
                      <input
                        type="checkbox"
                        aria-label={`Desktops for ${row.name}`}
                        checked={row.desktops}
                        onChange={(event) => update(row.name, { desktops: event.target.checked })}
                      />
                      Desktops
                    </label>
                    <label className="checkbox">
                      <input
                        type="checkbox"
                        aria-label={`Network for ${row.name}`}
                        checked={row.network}
                        onChange={(event) => update(row.name, { network: event.target.checked })}
                      />
                      Network
                    </label>
                  </div>
                </td>
                <td className="row-end">
                  <RemoveButton
                    name={row.name}
                    onRemove={() =>
                      setRows((previous) => previous.filter((old) => old.name !== row.name))
                    }
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <AddOrganization
        taken={rows.map((row) => row.name)}
        onAdd={(name) =>
          setRows((previous) => [
            ...previous,
            { name, exec: false, desktops: false, network: true },
          ])
        }
      />
      <SaveBar label="Save organizations" status={status} />
    </form>
  );
}

function AddOrganization({ taken, onAdd }: { taken: string[]; onAdd: (name: string) => void }) {
  const [name, setName] = useState('');
  const problem = organizationNameProblem(name, taken);
  const add = () => {
    if (problem) return;
    onAdd(name.trim());
    setName('');
  };
  return (
    <div className="form-row add-organization">
      <label>
        Organization name
        <input
          value={name}
          spellCheck={false}
          onChange={(event) => setName(event.target.value)}
          onKeyDown={(event) => {
            // Enter adds the name rather than saving the form.
            if (event.key !== 'Enter') return;
            event.preventDefault();
            add();
          }}
        />
      </label>
      <button type="button" className="secondary" disabled={Boolean(problem)} onClick={add}>
        Add
      </button>
      {name.trim() && problem && <span className="warn">{problem}</span>}
    </div>
  );
}
