import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { SecretCreateBody } from '../../../shared/secrets.js';
import { useApi } from '../api/api-context.js';
import { errorText, firstError } from '../api/error-text.js';
import { queryKeys, secretsQuery } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { localTime } from '../components/format.js';

/**
 * The vault: a value goes in here once and is never shown again; agents type it as
 * {{secret:NAME}}.
 */
export function SecretsSection() {
  const api = useApi();
  const secrets = useQuery(secretsQuery(api));
  const [error, setError] = useState<string>();
  const remove = useMutation({
    mutationFn: (name: string) => api.call('secrets.delete', { params: { name } }),
    meta: { invalidates: [queryKeys.secrets] },
  });

  return (
    <section className="panel" aria-labelledby="secrets-title">
      <h2 id="secrets-title">Secrets</h2>
      <p>
        Agents type a secret as <code>{'{{secret:NAME}}'}</code>; its value reaches the page only,
        never a model, an answer or a recording. A value cannot be read back.
      </p>
      <AddSecret onError={setError} />
      <ErrorText message={error ?? firstError(secrets.error)} />
      {secrets.data === undefined ? (
        !secrets.error && <Spinner label="loading secrets" />
      ) : secrets.data.length === 0 ? (
        <p className="muted">No secret yet.</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Type it as</th>
              <th scope="col">Set</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {secrets.data.map((secret) => (
              <tr key={secret.name}>
                <td>
                  <code>{`{{secret:${secret.name}}}`}</code>
                </td>
                <td>{localTime(secret.created_at)}</td>
                <td>
                  <AsyncButton
                    className="danger"
                    aria-label={`Delete secret ${secret.name}`}
                    onClick={() => remove.mutateAsync(secret.name)}
                    onError={setError}
                  >
                    Delete
                  </AsyncButton>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

function AddSecret({ onError }: { onError: (message: string | undefined) => void }) {
  const api = useApi();
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const create = useMutation({
    mutationFn: (body: SecretCreateBody) => api.call('secrets.create', { body }),
    meta: { invalidates: [queryKeys.secrets] },
  });
  const parsed = SecretCreateBody.safeParse({ name, value });
  const problem = name && value && !parsed.success ? parsed.error.issues[0]?.message : undefined;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!parsed.success) return;
    try {
      await create.mutateAsync(parsed.data);
      setName('');
      setValue('');
      onError(undefined);
    } catch (error) {
      onError(errorText(error));
    }
  };
  return (
    <form className="form-row" onSubmit={(event) => void submit(event)}>
      <label>
        Name
        <input value={name} spellCheck={false} onChange={(event) => setName(event.target.value)} />
      </label>
      <label>
        Value
        <input
          type="password"
          autoComplete="off"
          value={value}
          onChange={(event) => setValue(event.target.value)}
        />
      </label>
      <button type="submit" disabled={!parsed.success || create.isPending}>
        Save secret
      </button>
      {problem && <span className="warn">{problem}</span>}
    </form>
  );
}
