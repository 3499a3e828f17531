import { useEffect, useState, type FormEvent } from 'react';
import type { Settings, SettingsPatch } from '../../../shared/settings.js';
import { errorText } from '../api/client.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import type { SaveSettings } from './settings-screen.js';

type Limits = Settings['limits'];
const LIMITS: Array<[keyof Limits, string]> = [
  ['browsers_per_org', 'Browsers at once'],
  ['desktops_per_org', 'Desktops at once'],
  ['max_tabs', 'Tabs per browser'],
  ['requests_per_second', 'Requests per second per key'],
  ['burst', 'Request burst'],
  ['auth_failures_before_block', 'Failed sign-ins before an address is blocked'],
];

type Draft = { exec: boolean; hostMode: boolean; proxy: string; limits: Record<string, string> };

function draftOf(settings: Settings): Draft {
  return {
    exec: settings.exec.enabled,
    hostMode: settings.desktop.host_mode,
    proxy: settings.proxy.advanced_proxy_url ?? '',
    limits: Object.fromEntries(LIMITS.map(([key]) => [key, String(settings.limits[key])])),
  };
}

/** Only what changed: an untouched (masked) proxy URL is not sent back. */
function patchOf(settings: Settings, draft: Draft): SettingsPatch {
  const before = draftOf(settings);
  const patch: Record<string, Record<string, unknown>> = {};
  if (draft.exec !== before.exec) patch.exec = { enabled: draft.exec };
  if (draft.hostMode !== before.hostMode) patch.desktop = { host_mode: draft.hostMode };
  if (draft.proxy.trim() !== before.proxy) {
    patch.proxy = { advanced_proxy_url: draft.proxy.trim() || null };
  }
  for (const [key] of LIMITS) {
    if (draft.limits[key] !== before.limits[key]) {
      patch.limits = { ...patch.limits, [key]: Number(draft.limits[key]) };
    }
  }
  return patch as SettingsPatch;
}

/** Shell commands, the host desktop, the proxy and the limits. */
export function GeneralSection({ settings, onSave }: { settings: Settings; onSave: SaveSettings }) {
  const [draft, setDraft] = useState(() => draftOf(settings));
  const [status, setStatus] = useState<{ busy?: boolean; error?: string; saved?: boolean }>({});
  const stored = JSON.stringify(draftOf(settings));
  useEffect(() => setDraft(draftOf(settings)), [stored]);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setStatus({ busy: true });
    try {
      await onSave(patchOf(settings, draft));
      setStatus({ saved: true });
    } catch (failure) {
      setStatus({ error: errorText(failure) });
    }
  };
  const setLimit = (key: string, value: string) =>
    setDraft({ ...draft, limits: { ...draft.limits, [key]: value } });

  return (
    <form
      className="panel"
      aria-labelledby="general-title"
      onSubmit={(event) => void submit(event)}
    >
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
        {LIMITS.map(([key, label]) => (
          <label key={key}>
            {label}
            <input
              type="number"
              min={0}
              value={draft.limits[key]}
              onChange={(event) => setLimit(key, event.target.value)}
            />
          </label>
        ))}
      </div>
      <div className="form-actions">
        <button type="submit" disabled={status.busy}>
          Save {status.busy && <Spinner label="saving" />}
        </button>
        {status.saved && <span role="status">Saved.</span>}
      </div>
      <ErrorText message={status.error} />
    </form>
  );
}
