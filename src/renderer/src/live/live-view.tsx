import {
  useEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
  type RefObject,
} from 'react';
import type { Computer } from '../../../shared/computers.js';
import { useApi } from '../api/api-context.js';
import { errorText } from '../api/error-text.js';
import { act } from '../api/window-client.js';
import { ErrorText, Spinner } from '../components/feedback.js';
import { ActionQueue, type ViewAction } from './action-queue.js';
import { keyAction, toComputerPoint, wheelPixels, type Point, type Size } from './input-mapping.js';
import { useScreencast } from './use-screencast.js';

type Props = {
  computer: Computer;
  /** Runs before each of the person's actions (pauses an agent task that drives). */
  beforeAction: () => Promise<void>;
};

/**
 * The screencast scaled to the window. Clicks, the wheel and keys on it are performed on the
 * computer at the same pixel. Shift+Esc leaves the view, every other key goes to the computer.
 */
export function LiveView({ computer, beforeAction }: Props) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { width, height } = computer.display;
  const display = useMemo(() => ({ width, height }), [width, height]);
  const pointer = useRef<HTMLSpanElement>(null);
  const stream = useScreencast(computer.id, display, canvas, (point) =>
    movePointer(pointer.current, canvas.current, display, point),
  );
  const [error, setError] = useState<string>();
  const [mark, setMark] = useState<{ left: number; top: number; n: number }>();

  const queue = useActionQueue(computer.id, beforeAction, setError);

  const at = (event: { clientX: number; clientY: number }): Point => {
    const box = canvas.current!.getBoundingClientRect();
    return toComputerPoint({ x: event.clientX, y: event.clientY }, box, display);
  };
  const pointAction = (path: 'click' | 'double-click' | 'right-click', event: MouseEvent) => {
    const stage = event.currentTarget.parentElement!.getBoundingClientRect();
    const left = event.clientX - stage.left;
    const top = event.clientY - stage.top;
    setMark((previous) => ({ left, top, n: (previous?.n ?? 0) + 1 }));
    queue.push({ path, body: at(event) });
  };

  useWheel(canvas, (event) => {
    const { dx, dy } = wheelPixels(event, display);
    if (dx || dy) queue.push({ path: 'scroll', body: { ...at(event), dx, dy } });
  });

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === 'Escape' && event.shiftKey) {
      event.currentTarget.blur();
      return;
    }
    const action = keyAction(event);
    if (!action) return;
    event.preventDefault();
    if (action.type === 'type') queue.push({ path: 'type', body: { text: action.text } });
    else queue.push({ path: 'hotkey', body: { keys: action.keys } });
  };

  return (
    <div className="live">
      <div
        className="stage"
        tabIndex={0}
        role="application"
        aria-label={`Live view of ${computer.id}: click, scroll and type to control it; Shift+Esc leaves`}
        aria-roledescription="remote screen"
        onKeyDown={onKeyDown}
      >
        <canvas
          ref={canvas}
          width={width}
          height={height}
          // As large as the stage allows in the display's proportions, smaller or larger.
          style={{
            aspectRatio: `${width} / ${height}`,
            width: `min(100cqw, 100cqh * ${width / height})`,
          }}
          // The first click of a double-click has been sent already; the second is the dblclick.
          onClick={(event) => event.detail === 1 && pointAction('click', event)}
          onDoubleClick={(event) => pointAction('double-click', event)}
          onContextMenu={(event) => {
            event.preventDefault();
            pointAction('right-click', event);
          }}
        />
        <span ref={pointer} className="remote-pointer" aria-hidden="true" hidden>
          <svg viewBox="0 0 12 18" width="12" height="18">
            <path d="M0.5 0.5 V15 L4 11.5 L6.8 17.5 L9 16.5 L6.3 10.7 H11 Z" />
          </svg>
        </span>
        {mark && (
          <span
            key={mark.n}
            className="click-mark"
            aria-hidden="true"
            style={{ left: mark.left, top: mark.top }}
          />
        )}
      </div>
      <p className="live-status" aria-live="polite">
        {stream.phase === 'connecting' && <Spinner label="connecting to the screencast" />}
        {stream.phase === 'live' && <span>live · {stream.fps} fps</span>}
        {stream.phase !== 'live' && stream.message && <span>{stream.message}</span>}
      </p>
      <ErrorText message={error} />
    </div>
  );
}

/** A desktop's pointer, moved without a render: it may move as often as frames arrive. */
function movePointer(
  mark: HTMLElement | null,
  view: HTMLCanvasElement | null,
  display: Size,
  { x, y }: Point,
): void {
  if (!view || !mark) return;
  const left = view.offsetLeft + (x / display.width) * view.clientWidth;
  const top = view.offsetTop + (y / display.height) * view.clientHeight;
  mark.style.transform = `translate(${left}px, ${top}px)`;
  mark.hidden = false;
}

/** One queue for the view's life: a second one would let actions overtake each other. */
function useActionQueue(
  computerId: string,
  beforeAction: () => Promise<void>,
  setError: (message: string | undefined) => void,
): ActionQueue {
  const api = useApi();
  const before = useRef(beforeAction);
  before.current = beforeAction;
  return useMemo(
    () =>
      new ActionQueue(
        async (action: ViewAction) => {
          await before.current();
          await act(api, computerId, action.path, action.body);
          setError(undefined);
        },
        (failure) => setError(errorText(failure)),
      ),
    [api, computerId, setError],
  );
}

/** React's onWheel is passive; the page must not scroll while the wheel scrolls the computer. */
function useWheel(
  element: RefObject<HTMLCanvasElement | null>,
  onWheel: (event: WheelEvent) => void,
) {
  const handler = useRef(onWheel);
  handler.current = onWheel;
  useEffect(() => {
    const target = element.current;
    if (!target) return;
    const listener = (event: WheelEvent) => {
      event.preventDefault();
      handler.current(event);
    };
    target.addEventListener('wheel', listener, { passive: false });
    return () => target.removeEventListener('wheel', listener);
  }, [element]);
}
