import { RECORDING_FILES, type Recording } from '../../../shared/recordings.js';
import { clock } from '../components/format.js';

export function RecordingStatusBadge({ recording }: { recording: Recording }) {
  return (
    <span className={`status status-rec-${recording.status}`}>
      {recording.status === 'none' ? 'not recorded' : recording.status}
    </span>
  );
}

/** How long it covers: its duration once ended, the time so far while it records. */
export function duration(recording: Recording, now: number): string {
  if (recording.duration_ms !== null) return clock(recording.duration_ms / 1000);
  if (!recording.started_at) return '—';
  return clock((now - Date.parse(recording.started_at)) / 1000);
}

/**
 * What the video and events of a recording are read again for: its end, or a person asking to see
 * a running one up to now (each ask counted in `reloads`).
 */
export function videoVersion(recording: Recording, reloads: number): string {
  return `${recording.status}:${recording.ended_at ?? ''}:${reloads}`;
}

/** Whether it has frames to play: its video, or (while it records) the video so far. */
export function hasVideo(recording: Recording): boolean {
  return recording.files.some((file) => file.name === RECORDING_FILES.video.name);
}
