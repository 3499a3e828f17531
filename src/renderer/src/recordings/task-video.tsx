import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { Recording } from '../../../shared/recordings.js';
import type { Task } from '../../../shared/tasks.js';
import { useApi } from '../api/api-context.js';
import { recordingQuery } from '../api/queries.js';
import { href } from '../hooks/use-hash-route.js';
import { hasVideo, videoVersion } from './recording-status.js';
import { RecordingVideo, type VideoSync } from './recording-video.js';

const RECORDING_POLL_MS = 3000;

/**
 * The recording of the task's computer when it has a video (so far, while it records). Read
 * again only while it records; a computer without one (recording off, dropped) shows none.
 */
export function useTaskRecording(task: Task | undefined): Recording | undefined {
  const api = useApi();
  const recording = useQuery({
    ...recordingQuery(api, task?.computer_id ?? ''),
    enabled: task !== undefined,
    refetchInterval: (query) =>
      query.state.data?.status === 'recording' ? RECORDING_POLL_MS : false,
  });
  const found = recording.data;
  return found?.started_at && hasVideo(found) ? found : undefined;
}

type Props = {
  recording: Recording;
  sync: VideoSync;
  /** The task is over: the video is read again up to then (its computer may still run). */
  taskOver: boolean;
};

/** The task's video beside its timeline. */
export function TaskVideo({ recording, sync, taskOver }: Props) {
  const [reloads, setReloads] = useState(0);
  const id = recording.computer_id;
  const version = `${videoVersion(recording, reloads)}:${taskOver ? 'over' : 'running'}`;
  return (
    <aside className="task-video" aria-labelledby="task-video-title">
      <h2 id="task-video-title">Video</h2>
      <RecordingVideo computerId={id} version={version} sync={sync} />
      <p className="muted">Click a step to see it; the step on screen is marked.</p>
      {recording.status === 'recording' && (
        <p className="muted">
          The computer still runs: the video shows up to when it was loaded.{' '}
          <button type="button" className="link" onClick={() => setReloads((n) => n + 1)}>
            Load up to now
          </button>
        </p>
      )}
      <p>
        <a href={href.recording(id)}>The whole recording of {id}</a>
      </p>
    </aside>
  );
}
