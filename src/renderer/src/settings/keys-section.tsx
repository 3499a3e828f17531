import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { ApiKey, CreatedApiKey } from '../../../shared/keys.js';
import { sdkSnippet } from '../../../shared/window-connection.js';
import { useApi, useConnection } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { apiKeysQuery, queryKeys } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { localTime } from '../components/format.js';

type Props = {
  /** The key just created, for the SDK snippet (the only time the page knows a stored key). */
  snippetKey: string | undefined;
  onCreated: (key: string) => void;
};

/** Stored API keys: create one (shown once), copy it and the SDK snippet, revoke. */
export function KeysSection({ snippetKey, onCreated }: Props) {
  const api = useApi();
  const keys = useQuery(apiKeysQuery(api));
  const create = useMutation({
    mutationFn: () => api.call('keys.create', { body: {} }),
    meta: { invalidates: [queryKeys.keys] },
  });
  const [created, setCreated] = useState<CreatedApiKey>();
  const [error, setError] = useState<string>();
  const snippet = sdkSnippet(useConnection().baseUrl, snippetKey ?? '<a key created below>');

  return (
    <section className="panel" aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <p>Point the Lightcone SDKs at this Benchtop:</p>
      <div className="copy-row">
        <code className="snippet" aria-label="SDK environment">
          {snippet}
        </code>
        <CopyButton text={snippet} label="Copy snippet" />
      </div>
      <AsyncButton
        onClick={async () => {
          const answer = await create.mutateAsync();
          setCreated(answer);
          onCreated(answer.key);
        }}
        onError={setError}
      >
        Create key
      </AsyncButton>
      {created && (
        <div className="new-key" role="status">
          <p>
            New key <strong>{created.id}</strong>. It is shown only now: copy it somewhere safe.
          </p>
          <div className="copy-row">
            <label>
              <span className="visually-hidden">New API key</span>
              <input readOnly value={created.key} onFocus={(event) => event.target.select()} />
            </label>
            <CopyButton text={created.key} label="Copy key" />
          </div>
        </div>
      )}
      <ErrorText message={error ?? firstError(keys.error)} />
      {keys.data === undefined ? (
        !keys.error && <Spinner label="loading keys" />
      ) : keys.data.length === 0 ? (
        <p className="muted">No stored key yet (the window uses its own key).</p>
      ) : (
        <KeyTable keys={keys.data} onError={setError} />
      )}
    </section>
  );
}

type TableProps = {
  keys: ApiKey[];
  onError: (message: string | undefined) => void;
};

function KeyTable({ keys, onError }: TableProps) {
  const api = useApi();
  const revoke = useMutation({
    mutationFn: (id: string) => api.call('keys.revoke', { params: { id } }),
    meta: { invalidates: [queryKeys.keys] },
  });
  return (
    <table className="table">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Starts with</th>
          <th scope="col">Organization</th>
          <th scope="col">Created</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id} data-key-id={key.id}>
            <td>{key.id}</td>
            <td>
              <code>{key.prefix}…</code>
            </td>
            <td>{key.org}</td>
            <td>{localTime(key.created_at)}</td>
            <td>
              {key.revoked_at ? (
                <span className="status status-revoked">revoked {localTime(key.revoked_at)}</span>
              ) : (
                <AsyncButton
                  className="danger"
                  aria-label={`Revoke ${key.id}`}
                  onClick={() => revoke.mutateAsync(key.id)}
                  onError={onError}
                >
                  Revoke
                </AsyncButton>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
