import { useQuery } from '@tanstack/react-query';
import { useApi } from '../api/api-context.js';
import { downloadsQuery } from '../api/queries.js';
import { SavedDownloads } from '../recordings/downloads.js';

/**
 * What a running browser computer downloaded (a link the agent clicked, a page's export), listed
 * again as its events announce each one.
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
  return (
    <div className="computer-downloads">
      <SavedDownloads
        computerId={computerId}
        files={files}
        title="Kept with its recording after it ends (if it is recorded)"
        onError={onError}
      />
    </div>
  );
}
