import { useQuery } from '@tanstack/react-query';
import type { Recording } from '../../../shared/recordings.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { recordingsQuery } from '../api/queries.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { ShowOlder, useNewest } from '../components/show-older.js';
import { localTime } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';
import { fileSize } from './files.js';
import { RecordingDetail } from './recording-detail.js';
import { duration, RecordingStatusBadge } from './recording-status.js';

const COLUMNS = ['Computer', 'Kind', 'Status', 'Started', 'Duration', 'Size', 'Tasks'];

/** At most this many listed (the API's most); the newest 100 at first. */
const MAX_LISTED = 1000;

/** The organization's recordings, newest first; the selected one plays above the list. */
export function RecordingsScreen({ computerId }: { computerId?: string }) {
  const api = useApi();
  const { shown, older } = useNewest(100, MAX_LISTED);
  // Asked for more, the table keeps what it shows until they come.
  const recordings = useQuery({
    ...recordingsQuery(api, shown),
    placeholderData: (previous) => previous,
  });
  return (
    <section aria-labelledby="recordings-title">
      <header className="screen-head">
        <h1 id="recordings-title">Recordings</h1>
        <span className="muted">
          What every computer left behind: its screen, actions and files.
        </span>
      </header>
      {computerId && <RecordingDetail key={computerId} computerId={computerId} />}
      <h2>All recordings</h2>
      <ErrorText message={firstError(recordings.error)} />
      {recordings.data === undefined ? (
        !recordings.error && <Spinner label="loading recordings" />
      ) : recordings.data.length === 0 ? (
        <p className="muted">No recording yet. Every computer records from the moment it starts.</p>
      ) : (
        <>
          <RecordingTable recordings={recordings.data} selected={computerId} />
          <ShowOlder shown={shown} noun="recordings" onOlder={older(recordings.data.length)} />
        </>
      )}
    </section>
  );
}

function RecordingTable({ recordings, selected }: { recordings: Recording[]; selected?: string }) {
  const now = useNow();
  return (
    <table className="table recording-table">
      <thead>
        <tr>
          {COLUMNS.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {recordings.map((recording) => {
          const id = recording.computer_id;
          return (
            <tr
              key={id}
              data-computer-id={id}
              className={id === selected ? 'selected' : undefined}
              aria-current={id === selected ? 'true' : undefined}
            >
              <td>
                <a href={href.recording(id)}>{id}</a>
              </td>
              <td>{recording.kind}</td>
              <td>
                <RecordingStatusBadge recording={recording} />
              </td>
              <td className="no-wrap">
                {recording.started_at ? localTime(recording.started_at) : '—'}
              </td>
              <td>{duration(recording, now)}</td>
              <td className="no-wrap">{fileSize(recording.size_bytes)}</td>
              <td>
                {recording.task_ids.length === 0
                  ? '—'
                  : recording.task_ids.map((taskId) => (
                      <a key={taskId} className="task-link" href={href.task(taskId)}>
                        {taskId}
                      </a>
                    ))}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
