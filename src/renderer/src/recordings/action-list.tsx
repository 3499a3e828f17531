import { useEffect, useRef } from 'react';
import { playingIndex, videoTime, type ActionMark } from './recorded-actions.js';
import type { VideoSync } from './recording-video.js';

/**
 * The recording's actions (and the page's own changes, and the waits for a person) at their time
 * in the video: clicking one seeks there, and the one on screen at the playing position is marked
 * (and kept in sight while the video plays).
 */
export function ActionList({ marks, sync }: { marks: ActionMark[]; sync: VideoSync }) {
  const list = useRef<HTMLOListElement>(null);
  const playing = playingIndex(
    marks.map((mark) => mark.offsetMs),
    sync.positionMs,
  );
  useEffect(() => keepInSight(list.current, playing), [playing]);
  const nothingHappened = marks.every((mark) => mark.kind === 'end');
  return (
    <>
      {nothingHappened && <p className="muted">No action was sent to this computer.</p>}
      <ol ref={list} className="recorded-actions" aria-label="Actions">
        {marks.map((mark, index) => (
          <li key={mark.key} className={`mark-${mark.kind}`}>
            <button
              type="button"
              className={index === playing ? 'playing' : undefined}
              aria-current={index === playing ? 'true' : undefined}
              title={mark.error ? `Failed: ${mark.error}` : 'Show this moment in the video'}
              onClick={() => sync.seek(mark.offsetMs)}
            >
              <span className="mark-time">{videoTime(mark.offsetMs)}</span>
              <span className="mark-text">{mark.text}</span>
              {mark.byPerson && <span className="badge">live view</span>}
              {mark.kind !== 'action' && <span className="badge">{mark.kind}</span>}
              {mark.error && <span className="mark-failed">failed</span>}
            </button>
          </li>
        ))}
      </ol>
    </>
  );
}

/** Scrolls the list itself (never the page) so its playing item shows. */
function keepInSight(list: HTMLOListElement | null, index: number): void {
  const item = list?.children[index] as HTMLElement | undefined;
  if (!list || !item) return;
  const top = item.offsetTop;
  const bottom = top + item.offsetHeight;
  if (top < list.scrollTop || bottom > list.scrollTop + list.clientHeight) {
    list.scrollTop = top - (list.clientHeight - item.offsetHeight) / 2;
  }
}
