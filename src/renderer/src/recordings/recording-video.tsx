import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/error-text.js';
import { recordingVideoQuery } from '../api/queries.js';
import { Spinner } from '../components/feedback.js';

/** A video element to follow and steer: where it plays, and a seek that lists (timeline, actions) call. */
export type VideoSync = ReturnType<typeof useVideoSync>;

export function useVideoSync() {
  const ref = useRef<HTMLVideoElement>(null);
  const [positionMs, setPositionMs] = useState<number>();
  // A moment past the video's last frame (an action after the screen last changed) shows that
  // frame: the position stays the moment asked for, so its action is the one marked.
  const asked = useRef<number | undefined>(undefined);
  const update = useCallback(() => {
    const video = ref.current;
    if (!video) return;
    const at = video.currentTime * 1000;
    const atEnd = Number.isFinite(video.duration) && video.currentTime >= video.duration;
    if (!atEnd) asked.current = undefined;
    setPositionMs(Math.max(at, asked.current ?? at));
  }, []);
  const seek = useCallback(
    (offsetMs: number) => {
      if (!ref.current) return;
      asked.current = offsetMs;
      ref.current.currentTime = offsetMs / 1000;
      update();
    },
    [update],
  );
  return { ref, positionMs, seek, update };
}

type Props = {
  computerId: string;
  /** Changes when the video should be fetched again (a recording that grew, or ended). */
  version: string;
  sync: VideoSync;
};

/**
 * A recording's video, played in place. The video route needs the key, which a <video src>
 * cannot send: the window fetches it as a Blob and plays it from an object URL, revoked when the
 * video is left or replaced.
 */
export function RecordingVideo({ computerId, version, sync }: Props) {
  const api = useApi();
  const video = useQuery(recordingVideoQuery(api, computerId, version));
  const url = useObjectUrl(video.data);
  if (video.error) {
    return <p className="video-missing muted">No video to show: {errorText(video.error)}</p>;
  }
  if (!url) {
    return (
      <div className="video-missing muted">
        <Spinner label="loading the video" /> Loading the video…
      </div>
    );
  }
  return (
    <video
      ref={sync.ref}
      className="recording-video"
      src={url}
      controls
      preload="auto"
      aria-label={`Video of ${computerId}`}
      onTimeUpdate={sync.update}
      onSeeked={sync.update}
      onLoadedMetadata={sync.update}
    />
  );
}

/** An object URL for the Blob while it is shown; revoked when it changes or the view goes. */
function useObjectUrl(blob: Blob | undefined): string | undefined {
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    if (!blob) {
      setUrl(undefined);
      return;
    }
    const created = URL.createObjectURL(blob);
    setUrl(created);
    return () => URL.revokeObjectURL(created);
  }, [blob]);
  return url;
}
