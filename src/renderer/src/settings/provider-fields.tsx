import {
  DEFAULT_MODEL_RETRIES,
  DEFAULT_MODEL_TIMEOUT_MS,
  MASKED_SECRET,
  type ProviderKind,
} from '../../../shared/settings.js';
import {
  isNumberField,
  KINDS,
  NUMBER_FIELDS,
  type NumberField,
  PRICE_FIELDS,
  type PriceField,
  type ProviderRow,
  type TextField,
} from './provider-rows.js';

type Field = TextField | NumberField;

const LABELS: Record<Field, string> = {
  base_url: 'Base URL',
  model: 'Upstream model name',
  api_key_env: 'Key from variable',
  api_key: 'API key',
  script: 'Script file',
  timeout_ms: 'Timeout (ms)',
  max_retries: 'Retries after a rate limit or overload',
};
/** What an empty field means. */
const PLACEHOLDERS: Partial<Record<Field, string>> = {
  api_key: 'not set',
  timeout_ms: String(DEFAULT_MODEL_TIMEOUT_MS),
  max_retries: String(DEFAULT_MODEL_RETRIES),
};
const PRICE_LABELS: Record<PriceField, string> = {
  input_per_mtok: 'Input $ per million tokens',
  output_per_mtok: 'Output $ per million tokens',
  cached_input_per_mtok: 'Cached input $ per million (input price if empty)',
};

/** The fields each kind of provider reads. */
function fieldsOf(kind: ProviderKind): Field[] {
  if (kind === 'scripted') return ['script'];
  return ['base_url', 'model', 'api_key', 'api_key_env', ...NUMBER_FIELDS];
}

function inputType(field: Field): string {
  if (field === 'api_key') return 'password';
  return isNumberField(field) ? 'number' : 'text';
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
            type={inputType(field)}
            value={row[field]}
            autoComplete="off"
            spellCheck={false}
            placeholder={PLACEHOLDERS[field]}
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
