import { MASKED_SECRET, type ProviderKind } from '../../../shared/settings.js';
import {
  KINDS,
  PRICE_FIELDS,
  type PriceField,
  type ProviderRow,
  type TextField,
} from './provider-rows.js';

const LABELS: Record<TextField | 'timeout_ms', string> = {
  base_url: 'Base URL',
  model: 'Upstream model name',
  api_key_env: 'Key from variable',
  api_key: 'API key',
  script: 'Script file',
  timeout_ms: 'Timeout (ms)',
};
const PRICE_LABELS: Record<PriceField, string> = {
  input_per_mtok: 'Input $ per million tokens',
  output_per_mtok: 'Output $ per million tokens',
  cached_input_per_mtok: 'Cached input $ per million (input price if empty)',
};

/** The fields each kind of provider reads. */
function fieldsOf(kind: ProviderKind): Array<TextField | 'timeout_ms'> {
  if (kind === 'scripted') return ['script'];
  return ['base_url', 'model', 'api_key', 'api_key_env', 'timeout_ms'];
}

type Props = { row: ProviderRow; onChange: (row: ProviderRow) => void; onRemove: () => void };

export function ProviderFields({ row, onChange, onRemove }: Props) {
  const set = (field: keyof ProviderRow, value: string) => onChange({ ...row, [field]: value });
  return (
    <fieldset className="provider">
      <legend>{row.name}</legend>
      <label>
        Provider
        <select
          value={row.provider}
          onChange={(event) => set('provider', event.target.value as ProviderKind)}
        >
          {KINDS.map((kind) => (
            <option key={kind}>{kind}</option>
          ))}
        </select>
      </label>
      {fieldsOf(row.provider).map((field) => (
        <label key={field}>
          {LABELS[field]}
          <input
            type={field === 'api_key' ? 'password' : field === 'timeout_ms' ? 'number' : 'text'}
            value={row[field]}
            autoComplete="off"
            spellCheck={false}
            placeholder={field === 'api_key' ? 'not set' : undefined}
            onChange={(event) => set(field, event.target.value)}
          />
          {field === 'api_key' && row.api_key === MASKED_SECRET && (
            <small>a key is stored; leave it to keep it, clear it to remove it</small>
          )}
        </label>
      ))}
      {PRICE_FIELDS.map((field) => (
        <label key={field}>
          {PRICE_LABELS[field]}
          <input
            type="number"
            min={0}
            step="any"
            value={row[field]}
            placeholder="no price"
            onChange={(event) => set(field, event.target.value)}
          />
        </label>
      ))}
      <button type="button" className="danger" onClick={onRemove}>
        Remove {row.name}
      </button>
    </fieldset>
  );
}
