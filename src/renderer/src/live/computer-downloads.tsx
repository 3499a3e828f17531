import { useQuery } from '@tanstack/react-query';
import type { Computer } from '../../../shared/computers.js';
import { useApi } from '../api/api-context.js';
import { downloadsQuery } from '../api/queries.js';
import { SavedDownloads } from '../recordings/downloads.js';

/**
 * What a running computer's browser downloaded (a link the agent clicked, a page's export),
 * listed again as its events announce each one.
 */
export function ComputerDownloads({
  computer,
  onError,
}: {
  computer: Computer;
  onError: (message: string | undefined) => void;
}) {
  const api = useApi();
  const files = useQuery(downloadsQuery(api, computer.id)).data ?? [];
  return (
    <SavedDownloads
      computerId={computer.id}
      files={files}
      title={
        computer.kind === 'desktop'
          ? 'They go when the computer ends'
          : 'Kept with its recording after it ends (if it is recorded)'
      }
      className="computer-downloads"
      onError={onError}
    />
  );
}
