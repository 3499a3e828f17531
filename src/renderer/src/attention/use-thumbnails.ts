import { useEffect, useRef } from 'react';
import { useApi } from '../api/api-context.js';
import { follow, LatestFramePainter } from '../live/use-screencast.js';

/**
 * Two frames a second no wider than 320 pixels: enough to see what each computer does, and cheap
 * enough for a dozen at once.
 */
// Three a second: a rate capped at exactly two reads just under two between a stream's frames.
export const THUMBNAIL_QUERY = { fps: 3, quality: 60, max_width: 320 };

/**
 * Live frames of several computers on one connection: a browser opens at most six to a server,
 * so one stream per thumbnail would leave most of a dozen dark (and the polls waiting). Returns
 * the ref callback each thumbnail's canvas registers with.
 */
export function useThumbnails(computerIds: readonly string[]) {
  const api = useApi();
  const canvases = useRef(new Map<string, HTMLCanvasElement>());
  const ids = [...computerIds].sort().join(',');

  useEffect(() => {
    if (!ids) return;
    const controller = new AbortController();
    const painters = new Map<string, LatestFramePainter>();
    const painter = (id: string) => {
      let found = painters.get(id);
      if (!found) {
        const canvas = {
          get current() {
            return canvases.current.get(id) ?? null;
          },
        };
        found = new LatestFramePainter(canvas, () => undefined);
        painters.set(id, found);
      }
      return found;
    };
    const query = { ...THUMBNAIL_QUERY, ids };
    follow(controller.signal, async (signal) => {
      for await (const { data } of api.events('streams.screencasts', { query, signal })) {
        if ('image_data' in data) painter(data.computer_id).offer(data.image_data);
      }
    }).catch(() => {
      // A computer that ended while its id was asked for: the list's next poll drops it.
    });
    return () => controller.abort();
  }, [api, ids]);

  return (id: string) => (canvas: HTMLCanvasElement | null) => {
    if (canvas) canvases.current.set(id, canvas);
    else canvases.current.delete(id);
  };
}
