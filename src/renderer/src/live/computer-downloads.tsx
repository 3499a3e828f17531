import { useQuery } from '@tanstack/react-query';
import { useApi } from '../api/api-context.js';
import { downloadsQuery } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { fileSize, saveFile } from '../recordings/files.js';

/**
 * The files a browser computer downloaded (a link the agent clicked, a page's export), each
 * saved here with a click. Shown once there is one; they go when the computer ends.
 */
export function ComputerDownloads({
  computerId,
  onError,
}: {
  computerId: string;
  onError: (message: string | undefined) => void;
}) {
  const api = useApi();
  const files = useQuery(downloadsQuery(api, computerId)).data ?? [];
  if (files.length === 0) return null;
  return (
    <div className="download-group computer-downloads" role="group" aria-label="Downloads">
      <span className="download-label" title="They go when the computer ends">
        Downloads
      </span>
      {files.map((file) => (
        <AsyncButton
          key={file.name}
          className="secondary"
          aria-label={`Save ${file.name}`}
          onClick={async () => {
            const params = { id: computerId, name: file.name };
            saveFile(
              await api.call('computers.download', { params }),
              file.name,
              'application/octet-stream',
            );
          }}
          onError={onError}
        >
          {file.name} <span className="muted">{fileSize(file.size_bytes)}</span>
        </AsyncButton>
      ))}
    </div>
  );
}
