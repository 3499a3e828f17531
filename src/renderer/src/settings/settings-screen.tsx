import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { SettingsAnswer, SettingsPatch } from '../../../shared/settings.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { queryKeys, settingsQuery } from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { BackendsSection } from './backends-section.js';
import { GeneralSection } from './general-section.js';
import { KeysSection } from './keys-section.js';
import { ModelsSection } from './models-section.js';
import { OrganizationsSection } from './organizations-section.js';
import { PoliciesSection } from './policies-section.js';
import { SecretsSection } from './secrets-section.js';
import type { SaveSettings } from './save-bar.js';

export function SettingsScreen() {
  const api = useApi();
  const queryClient = useQueryClient();
  // Read when the screen opens, not again behind the back of a person editing a form.
  const settings = useQuery({ ...settingsQuery(api), refetchOnWindowFocus: false });
  const [createdKey, setCreatedKey] = useState<string>();
  // The answer is what is stored now; a saved model also changes the list of models, saved
  // backends the list of backends.
  const patch = useMutation({
    mutationFn: (change: SettingsPatch) => api.call('settings.update', { body: change }),
    onSuccess: (answer) => queryClient.setQueryData(queryKeys.settings, answer),
    meta: { invalidates: [queryKeys.models, queryKeys.backends] },
  });
  const save: SaveSettings = async (change) => {
    await patch.mutateAsync(change);
  };
  const answer = settings.data;
  const error = firstError(settings.error);

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
      <PoliciesSection />
      <SecretsSection />
      {answer && <GeneralSection settings={answer.settings} onSave={save} />}
      {answer && <BackendsSection settings={answer.settings} onSave={save} />}
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
