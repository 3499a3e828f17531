import { useState } from 'react';
import type { OutputAction } from '../../../shared/responses.js';
import { describeModelAction as describeAction } from '../../../shared/describe-action.js';

type Props = { url: string; actions: OutputAction[]; step: number };

/**
 * The step's screenshot with its actions drawn on it: a ring where it clicked, a line where it
 * dragged, a caption for what it typed or pressed. Drawn in the image's own pixels (the action's
 * coordinates), so it lines up at any thumbnail size.
 */
export function ActionShot({ url, actions, step }: Props) {
  const [size, setSize] = useState<{ width: number; height: number }>();
  const [gone, setGone] = useState(false);
  if (gone) return <div className="shot shot-empty">screenshot no longer kept</div>;
  const captions = actions.filter((action) => action.x === undefined).map(describeAction);
  return (
    <a className="shot" href={url} target="_blank" rel="noreferrer" title="Open the screenshot">
      <img
        src={url}
        alt={`Screenshot of step ${step}`}
        loading="lazy"
        onLoad={(event) =>
          setSize({
            width: event.currentTarget.naturalWidth,
            height: event.currentTarget.naturalHeight,
          })
        }
        onError={() => setGone(true)}
      />
      {size && (
        <svg
          className="shot-marks"
          viewBox={`0 0 ${size.width} ${size.height}`}
          preserveAspectRatio="none"
          aria-hidden="true"
        >
          {actions.map((action, index) => (
            <Mark key={index} action={action} unit={size.width / 100} />
          ))}
        </svg>
      )}
      {captions.length > 0 && <span className="shot-caption">{captions.join(' · ')}</span>}
    </a>
  );
}

function Mark({ action, unit }: { action: OutputAction; unit: number }) {
  if (action.x === undefined || action.y === undefined) return null;
  const ring = (x: number, y: number) => (
    <circle cx={x} cy={y} r={unit * 1.6} className="mark-ring" strokeWidth={unit * 0.5} />
  );
  if (action.type === 'drag' && action.end_x !== undefined && action.end_y !== undefined) {
    return (
      <g>
        <line
          x1={action.x}
          y1={action.y}
          x2={action.end_x}
          y2={action.end_y}
          className="mark-line"
          strokeWidth={unit * 0.5}
        />
        {ring(action.x, action.y)}
        {ring(action.end_x, action.end_y)}
      </g>
    );
  }
  return (
    <g>
      {ring(action.x, action.y)}
      <circle cx={action.x} cy={action.y} r={unit * 0.4} className="mark-dot" />
    </g>
  );
}
