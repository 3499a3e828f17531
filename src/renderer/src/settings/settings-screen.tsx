import { useCallback, useEffect, useState } from 'react';
import type { SettingsAnswer, SettingsPatch } from '../../../shared/settings.js';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/client.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { GeneralSection } from './general-section.js';
import { KeysSection } from './keys-section.js';
import { ModelsSection } from './models-section.js';
import { OrganizationsSection } from './organizations-section.js';

/** Saves one section's patch and reports what it changed; a failure is thrown to the section. */
export type SaveSettings = (patch: SettingsPatch) => Promise<void>;

export function SettingsScreen() {
  const api = useApi();
  const [answer, setAnswer] = useState<SettingsAnswer>();
  const [error, setError] = useState<string>();
  const [createdKey, setCreatedKey] = useState<string>();

  useEffect(() => {
    api.get<SettingsAnswer>('/settings').then(setAnswer, (failure: unknown) => {
      setError(errorText(failure));
    });
  }, [api]);
  const save: SaveSettings = useCallback(
    async (patch) => setAnswer(await api.patch<SettingsAnswer>('/settings', patch)),
    [api],
  );

  return (
    <section aria-labelledby="settings-title" className="settings">
      <header className="screen-head">
        <h1 id="settings-title">Settings</h1>
      </header>
      <KeysSection onCreated={setCreatedKey} snippetKey={createdKey} />
      <ErrorText message={error} />
      {!answer && !error && <Spinner label="loading settings" />}
      {answer && <SettingsNotes answer={answer} />}
      {answer && <ModelsSection settings={answer.settings} onSave={save} />}
      {answer && <GeneralSection settings={answer.settings} onSave={save} />}
      {answer && <OrganizationsSection settings={answer.settings} onSave={save} />}
    </section>
  );
}

function SettingsNotes({ answer }: { answer: SettingsAnswer }) {
  if (answer.restart_required.length === 0 && answer.overridden.length === 0) return null;
  return (
    <div className="notice" role="status">
      {answer.restart_required.length > 0 && (
        <p>
          Restart Benchtop to apply: <code>{answer.restart_required.join(', ')}</code>.
        </p>
      )}
      {answer.overridden.length > 0 && (
        <p>
          Set by the environment or the command line while Benchtop runs (they win over what is
          saved here): <code>{answer.overridden.join(', ')}</code>.
        </p>
      )}
    </div>
  );
}
