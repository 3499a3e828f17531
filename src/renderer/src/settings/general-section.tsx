import { useEffect, useState } from 'react';
import type { Settings, SettingsPatch } from '../../../shared/settings.js';
import { SaveBar, useSave, type SaveSettings } from './save-bar.js';

type Limits = Settings['limits'];
const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

/** One limit as a person edits it: `unit` bytes per shown unit; `whole` for an integer setting. */
type LimitField = { key: keyof Limits; label: string; unit?: number; whole?: boolean };
export const LIMITS: LimitField[] = [
  { key: 'browsers_per_org', label: 'Browsers per organization', whole: true },
  { key: 'desktops_per_org', label: 'Desktops per organization', whole: true },
  { key: 'requests_per_second', label: 'Requests per second per organization' },
  { key: 'burst', label: 'Request burst per organization', whole: true },
  { key: 'keys_per_org', label: 'API keys per organization', whole: true },
  { key: 'key_creations_per_minute', label: 'New keys per organization per minute', whole: true },
  { key: 'stored_bytes_per_org', label: 'Stored data per organization (GiB)', unit: GIB },
  { key: 'retention_days', label: 'Keep responses and finished tasks (days)' },
  { key: 'max_tabs', label: 'Tabs per browser', whole: true },
  { key: 'screenshots_per_computer', label: 'Screenshots kept per computer', whole: true },
  { key: 'max_input_bytes', label: 'Input stored per request (MiB)', unit: MIB },
  { key: 'images_per_request', label: 'Images per request', whole: true },
  { key: 'image_bytes_per_request', label: 'Image data per request (MiB)', unit: MIB },
  { key: 'image_fetch_timeout_seconds', label: 'Seconds to fetch an image' },
  {
    key: 'auth_failures_before_block',
    label: 'Failed sign-ins before an address is blocked',
    whole: true,
  },
];

/** A limit as shown: bytes in GiB or MiB, to at most three decimals. */
function shown(field: LimitField, value: number): string {
  if (!field.unit) return String(value);
  return String(Math.round((value / field.unit) * 1000) / 1000);
}

/** A limit as stored: what was typed, back in bytes for a byte limit (always whole bytes). */
function stored(field: LimitField, text: string): number {
  const value = Number(text);
  return field.unit ? Math.round(value * field.unit) : value;
}

export type GeneralDraft = {
  exec: boolean;
  sandboxOwner: boolean;
  hostMode: boolean;
  proxy: string;
  limits: Record<string, string>;
};

export function generalDraft(settings: Settings): GeneralDraft {
  return {
    exec: settings.exec.enabled,
    sandboxOwner: settings.exec.sandbox_owner,
    hostMode: settings.desktop.host_mode,
    proxy: settings.proxy.advanced_proxy_url ?? '',
    limits: Object.fromEntries(
      LIMITS.map((field) => [field.key, shown(field, settings.limits[field.key])]),
    ),
  };
}

/** Only what changed: an untouched (masked) proxy URL or a rounded byte limit is not sent back. */
export function generalPatch(settings: Settings, draft: GeneralDraft): SettingsPatch {
  const before = generalDraft(settings);
  const patch: Record<string, Record<string, unknown>> = {};
  if (draft.exec !== before.exec) patch.exec = { enabled: draft.exec };
  if (draft.sandboxOwner !== before.sandboxOwner) {
    patch.exec = { ...patch.exec, sandbox_owner: draft.sandboxOwner };
  }
  if (draft.hostMode !== before.hostMode) patch.desktop = { host_mode: draft.hostMode };
  if (draft.proxy.trim() !== before.proxy) {
    patch.proxy = { advanced_proxy_url: draft.proxy.trim() || null };
  }
  for (const field of LIMITS) {
    const text = draft.limits[field.key];
    if (text !== undefined && text !== before.limits[field.key]) {
      patch.limits = { ...patch.limits, [field.key]: stored(field, text) };
    }
  }
  return patch as SettingsPatch;
}

/** Shell commands, the sandbox, the host desktop, the proxy and the limits. */
export function GeneralSection({ settings, onSave }: { settings: Settings; onSave: SaveSettings }) {
  const [draft, setDraft] = useState(() => generalDraft(settings));
  const storedDraft = JSON.stringify(generalDraft(settings));
  useEffect(() => setDraft(generalDraft(settings)), [storedDraft]);
  const { status, onSubmit } = useSave(onSave, () => generalPatch(settings, draft));
  const setLimit = (key: string, value: string) =>
    setDraft({ ...draft, limits: { ...draft.limits, [key]: value } });

  return (
    <form className="panel" aria-labelledby="general-title" onSubmit={onSubmit}>
      <h2 id="general-title">Computers and limits</h2>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={draft.exec}
          onChange={(event) => setDraft({ ...draft, exec: event.target.checked })}
        />
        Allow shell commands (exec) on computers
      </label>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={draft.sandboxOwner}
          onChange={(event) => setDraft({ ...draft, sandboxOwner: event.target.checked })}
        />
        Run my own commands and desktops in the sandbox too
      </label>
      <label className="checkbox">
        <input
          type="checkbox"
          checked={draft.hostMode}
          onChange={(event) => setDraft({ ...draft, hostMode: event.target.checked })}
        />
        Host desktop mode: a desktop computer may drive this machine's real screen
      </label>
      <label>
        Proxy URL for computers started with use_advanced_proxy
        <input
          type="text"
          value={draft.proxy}
          placeholder="http://user:password@proxy.example:8080"
          spellCheck={false}
          onChange={(event) => setDraft({ ...draft, proxy: event.target.value })}
        />
      </label>
      <div className="limits">
        {LIMITS.map((field) => (
          <label key={field.key}>
            {field.label}
            <input
              type="number"
              min={0}
              step={field.whole ? 1 : 'any'}
              value={draft.limits[field.key]}
              onChange={(event) => setLimit(field.key, event.target.value)}
            />
          </label>
        ))}
      </div>
      <SaveBar label="Save" status={status} />
    </form>
  );
}
