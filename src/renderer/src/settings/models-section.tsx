import { useEffect, useState } from 'react';
import type { ProviderKind, Settings } from '../../../shared/settings.js';
import { ProviderFields } from './provider-fields.js';
import { emptyRow, KINDS, modelsPatch, toRows, type ProviderRow } from './provider-rows.js';
import { SaveBar, useSave, type SaveSettings } from './save-bar.js';

/** Model names and the providers behind them, with their keys; the default model. */
export function ModelsSection({ settings, onSave }: { settings: Settings; onSave: SaveSettings }) {
  const [rows, setRows] = useState(() => toRows(settings.models.providers));
  const [defaultModel, setDefaultModel] = useState(settings.models.default);
  const [localOnly, setLocalOnly] = useState(settings.models.local_only);
  // After a save the form shows what is stored now (a typed key becomes the mask).
  const stored = JSON.stringify(settings.models);
  useEffect(() => {
    setRows(toRows(settings.models.providers));
    setDefaultModel(settings.models.default);
    setLocalOnly(settings.models.local_only);
  }, [stored]);

  const update = (index: number, row: ProviderRow) =>
    setRows((previous) => previous.map((old, n) => (n === index ? row : old)));
  const { status, onSubmit } = useSave(onSave, () =>
    modelsPatch(settings.models, defaultModel, rows, localOnly),
  );

  return (
    <form className="panel" aria-labelledby="models-title" onSubmit={onSubmit}>
      <h2 id="models-title">Models and providers</h2>
      <label>
        Default model
        <select value={defaultModel} onChange={(event) => setDefaultModel(event.target.value)}>
          {rows.map((row) => (
            <option key={row.name} value={row.name}>
              {row.name}
            </option>
          ))}
        </select>
      </label>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={localOnly}
          onChange={(event) => setLocalOnly(event.target.checked)}
        />
        Keep every model call on this machine: refuse providers that are not on loopback
        (models.local_only)
      </label>
      {rows.map((row, index) => (
        <ProviderFields
          key={row.name}
          row={row}
          onChange={(next) => update(index, next)}
          onRemove={() => setRows((previous) => previous.filter((_, n) => n !== index))}
        />
      ))}
      <AddProvider
        taken={rows.map((row) => row.name)}
        onAdd={(row) => setRows((previous) => [...previous, row])}
      />
      <SaveBar label="Save models" status={status} />
    </form>
  );
}

function AddProvider({ taken, onAdd }: { taken: string[]; onAdd: (row: ProviderRow) => void }) {
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ProviderKind>('openai-compatible');
  const clash = taken.includes(name.trim());
  return (
    <fieldset className="add-provider">
      <legend>Add a model</legend>
      <label>
        Model name
        <input value={name} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        Provider
        <select value={kind} onChange={(event) => setKind(event.target.value as ProviderKind)}>
          {KINDS.map((option) => (
            <option key={option}>{option}</option>
          ))}
        </select>
      </label>
      <button
        type="button"
        className="secondary"
        disabled={!name.trim() || clash}
        onClick={() => {
          onAdd(emptyRow(name.trim(), kind));
          setName('');
        }}
      >
        Add
      </button>
      {clash && <span className="warn">That name is taken.</span>}
    </fieldset>
  );
}
