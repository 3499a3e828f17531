import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { Recording } from '../../../shared/recordings.js';
import { useApi } from '../api/api-context.js';
import { firstError } from '../api/error-text.js';
import { queryKeys, recordingEventsQuery, recordingQuery } from '../api/queries.js';
import { AsyncButton } from '../components/async-button.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { localTime } from '../components/format.js';
import { href } from '../hooks/use-hash-route.js';
import { useNow } from '../hooks/use-now.js';
import { ActionList } from './action-list.js';
import { RecordingDownloads } from './downloads.js';
import { fileSize } from './files.js';
import { actionMarks } from './recorded-actions.js';
import { duration, hasVideo, RecordingStatusBadge, videoVersion } from './recording-status.js';
import { RecordingVideo, useVideoSync } from './recording-video.js';

/** One recording: its video with the actions beside it (a click seeks), and its files. */
export function RecordingDetail({ computerId }: { computerId: string }) {
  const api = useApi();
  const recording = useQuery(recordingQuery(api, computerId));
  const [error, setError] = useState<string>();
  const current = recording.data;
  return (
    <article className="panel recording-detail" aria-labelledby="recording-title">
      <header className="recording-head">
        <h2 id="recording-title">{computerId}</h2>
        {current && <RecordingFacts recording={current} />}
        <span className="head-actions">
          {current && current.status !== 'recording' && (
            <DeleteButton computerId={computerId} onError={setError} />
          )}
          <a className="button secondary" href={href.recordings}>
            Close
          </a>
        </span>
      </header>
      <ErrorText message={error ?? firstError(recording.error)} />
      {!current && !recording.error && <Spinner label="loading the recording" />}
      {current?.status === 'none' && (
        <p className="muted">This computer was created with recording off: nothing was kept.</p>
      )}
      {current && current.status !== 'none' && <Player recording={current} />}
      {current && current.status !== 'none' && (
        <RecordingDownloads recording={current} onError={setError} />
      )}
    </article>
  );
}

function RecordingFacts({ recording }: { recording: Recording }) {
  const now = useNow();
  return (
    <>
      <RecordingStatusBadge recording={recording} />
      <span className="facts">
        <span>{recording.kind}</span>
        {recording.started_at && <span>started {localTime(recording.started_at)}</span>}
        <span>{duration(recording, now)}</span>
        <span>{fileSize(recording.size_bytes)}</span>
      </span>
    </>
  );
}

/**
 * The video and the actions, read once per version: a recording that still runs is shown up to
 * the moment it was opened, and again up to now when the person asks.
 */
function Player({ recording }: { recording: Recording }) {
  const api = useApi();
  const id = recording.computer_id;
  const [reloads, setReloads] = useState(0);
  const version = videoVersion(recording, reloads);
  const sync = useVideoSync();
  const events = useQuery(recordingEventsQuery(api, id, version));
  const [showReads, setShowReads] = useState(false);
  const marks =
    events.data && recording.started_at ? actionMarks(events.data, recording.started_at) : [];
  const reads = marks.filter((mark) => mark.read).length;
  const shown = showReads ? marks : marks.filter((mark) => !mark.read);
  const actions = shown.filter((mark) => mark.kind === 'action');
  return (
    <>
      {recording.status === 'recording' && (
        <p className="notice">
          Still recording: the video shows up to when it was loaded.{' '}
          <button type="button" className="link" onClick={() => setReloads((n) => n + 1)}>
            Load up to now
          </button>
        </p>
      )}
      <div className="player">
        {hasVideo(recording) ? (
          <RecordingVideo computerId={id} version={version} sync={sync} />
        ) : (
          <p className="video-missing muted">No video: nothing was shown on its screen yet.</p>
        )}
        <div className="player-side">
          <h3>
            Actions{' '}
            {events.data && (
              <span className="muted">
                {actions.length} · {actions.filter((mark) => mark.byPerson).length} from the live
                view
              </span>
            )}
          </h3>
          {reads > 0 && (
            <label className="checkbox">
              <input
                type="checkbox"
                checked={showReads}
                onChange={(event) => setShowReads(event.target.checked)}
              />
              Show {reads} {reads === 1 ? 'read' : 'reads'} (screenshots, tabs, HTML)
            </label>
          )}
          <ErrorText message={firstError(events.error)} />
          {!events.data && !events.error && <Spinner label="loading the actions" />}
          {events.data && <ActionList marks={shown} sync={sync} />}
        </div>
      </div>
    </>
  );
}

function DeleteButton(props: { computerId: string; onError: (message?: string) => void }) {
  const api = useApi();
  const remove = useMutation({
    mutationFn: async () => {
      await api.call('recordings.delete', { params: { id: props.computerId } });
      // Leave before the list is read again: this recording is gone.
      location.hash = href.recordings;
    },
    meta: { invalidates: [queryKeys.recordingList] },
  });
  return (
    <AsyncButton
      className="danger"
      aria-label={`Delete the recording of ${props.computerId}`}
      onClick={() => remove.mutateAsync()}
      onError={props.onError}
    >
      Delete
    </AsyncButton>
  );
}
