import { useState, type FormEvent } from 'react';
import type { SettingsPatch } from '../../../shared/settings.js';
import { errorText } from '../api/error-text.js';
import { ErrorText, Spinner } from '../components/feedback.js';

/** Saves one section's patch and reports what it changed; a failure is thrown to the section. */
export type SaveSettings = (patch: SettingsPatch) => Promise<void>;

type SaveStatus = { busy?: boolean; error?: string; saved?: boolean };

/**
 * A settings section's saving: the form's submit handler and what it shows. `patchOf` gives what
 * changed; undefined when nothing did (then nothing is sent and the section reads "Saved.").
 */
export function useSave(onSave: SaveSettings, patchOf: () => SettingsPatch | undefined) {
  const [status, setStatus] = useState<SaveStatus>({});
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const patch = patchOf();
    if (!patch) return setStatus({ saved: true });
    setStatus({ busy: true });
    try {
      await onSave(patch);
      setStatus({ saved: true });
    } catch (failure) {
      setStatus({ error: errorText(failure) });
    }
  };
  return { status, onSubmit: (event: FormEvent) => void submit(event) };
}

/** A section's save button, its spinner while saving, "Saved." after, or the server's error. */
export function SaveBar({ label, status }: { label: string; status: SaveStatus }) {
  return (
    <>
      <div className="form-actions">
        <button type="submit" disabled={status.busy}>
          {label} {status.busy && <Spinner label="saving" />}
        </button>
        {status.saved && <span role="status">Saved.</span>}
      </div>
      <ErrorText message={status.error} />
    </>
  );
}

/**
 * A listed row's Remove button: takes it out of the section's list, which its save then stores.
 * `disabledBecause`: why it cannot be removed, shown on the disabled button.
 */
export function RemoveButton(props: {
  name: string;
  onRemove: () => void;
  disabledBecause?: string;
}) {
  return (
    <button
      type="button"
      className="danger"
      aria-label={`Remove ${props.name}`}
      disabled={props.disabledBecause !== undefined}
      title={props.disabledBecause}
      onClick={props.onRemove}
    >
      Remove
    </button>
  );
}
