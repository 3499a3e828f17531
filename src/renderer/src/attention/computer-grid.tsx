import { useMemo, useRef } from 'react';
import type { Computer } from '../../../shared/computers.js';
import { href } from '../hooks/use-hash-route.js';
import { useScreencast, type ScreencastRate } from '../live/use-screencast.js';

/**
 * Two frames a second no wider than 320 pixels: enough to see what each computer does, and cheap
 * enough for a dozen of them at once (each capture encodes small frames, each thumbnail decodes
 * a few kB a frame).
 */
const THUMBNAIL_RATE: ScreencastRate = { fps: 2, maxWidth: 320 };

/** Every running computer as a small live screen; a click opens its live view. */
export function ComputerGrid({
  computers,
  waiting,
}: {
  computers: Computer[];
  waiting: Set<string>;
}) {
  if (computers.length === 0) return <p className="muted">No computer is running.</p>;
  return (
    <ul className="computer-grid" aria-label="Running computers">
      {computers.map((computer) => (
        <li key={computer.id}>
          <Thumbnail computer={computer} waiting={waiting.has(computer.id)} />
        </li>
      ))}
    </ul>
  );
}

function Thumbnail({ computer, waiting }: { computer: Computer; waiting: boolean }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { width, height } = computer.display;
  const display = useMemo(() => ({ width, height }), [width, height]);
  const stream = useScreencast(computer.id, display, canvas, ignoreCursor, THUMBNAIL_RATE);
  return (
    <a
      className={waiting ? 'thumbnail thumbnail-waiting' : 'thumbnail'}
      href={href.computer(computer.id)}
      title={`Open the live view of ${computer.id}`}
      data-computer-id={computer.id}
    >
      <canvas
        ref={canvas}
        width={width}
        height={height}
        style={{ aspectRatio: `${width} / ${height}` }}
        aria-label={`Live screen of ${computer.id}`}
      />
      <span className="thumbnail-label">
        <span className="ellipsis">{computer.id}</span>
        <span className="muted">
          {waiting ? 'needs you' : stream.phase === 'live' ? computer.kind : stream.phase}
        </span>
      </span>
    </a>
  );
}

/** A thumbnail draws no pointer. */
function ignoreCursor(): void {}
