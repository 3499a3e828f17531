import type { Backend } from '../../../shared/backends.js';
import { href } from '../hooks/use-hash-route.js';

/**
 * Whether the window should say where browsers run: only once that is more than this machine's
 * Chromium (settings' browser.backends lists a Playwright server or a Grid).
 */
export function showsBackends(backends: readonly Backend[] | undefined): boolean {
  return (backends ?? []).some((backend) => backend.type !== 'local');
}

/** Each backend's name, whether it answers and how full it is; a link to change the list. */
export function BackendsLine({ backends }: { backends: readonly Backend[] }) {
  return (
    <p className="backends-line">
      <span className="muted">Browsers run on</span>
      {backends.map((backend) => (
        <span
          key={backend.name}
          className={`backend backend-${backend.status}`}
          data-backend={backend.name}
          title={`${backend.type}: ${backend.url ?? 'this machine'}`}
        >
          {backend.name}{' '}
          <span className="backend-load">
            {backend.status === 'down'
              ? 'down, no new computer goes there'
              : `${backend.running} of ${backend.capacity}`}
          </span>
        </span>
      ))}
      <a href={href.settings}>change</a>
    </p>
  );
}
