import { useMemo } from 'react';
import type { Computer } from '../../../shared/computers.js';
import { href } from '../hooks/use-hash-route.js';
import { useThumbnails } from './use-thumbnails.js';

type Props = { computers: Computer[]; waiting: Set<string> };

/** Every running computer as a small live screen; a click opens its live view. */
export function ComputerGrid({ computers, waiting }: Props) {
  const running = useMemo(
    () => computers.filter((computer) => computer.status === 'running'),
    [computers],
  );
  const canvasOf = useThumbnails(running.map((computer) => computer.id));
  if (running.length === 0) return <p className="muted">No computer is running.</p>;
  return (
    <ul className="computer-grid" aria-label="Running computers">
      {running.map((computer) => {
        const { width, height } = computer.display;
        const needsYou = waiting.has(computer.id);
        return (
          <li key={computer.id}>
            <a
              className={needsYou ? 'thumbnail thumbnail-waiting' : 'thumbnail'}
              href={href.computer(computer.id)}
              title={`Open the live view of ${computer.id}`}
              data-computer-id={computer.id}
            >
              <canvas
                ref={canvasOf(computer.id)}
                width={width}
                height={height}
                style={{ aspectRatio: `${width} / ${height}` }}
                aria-label={`Live screen of ${computer.id}`}
              />
              <span className="thumbnail-label">
                <span className="ellipsis">{computer.id}</span>
                <span className="muted">{needsYou ? 'needs you' : computer.kind}</span>
              </span>
            </a>
          </li>
        );
      })}
    </ul>
  );
}
