import { z } from 'zod';

/** Query of GET /computers/{id}/screencast. */
export const ScreencastQuery = z.object({
  fps: z.coerce.number().int().min(1).max(30).default(15),
  quality: z.coerce.number().int().min(1).max(100).default(70),
  max_width: z.coerce.number().int().min(16).max(7680).optional(),
});

export const ScreencastFrame = z
  .object({
    image_data: z.string().describe('base64 JPEG'),
    metadata: z.object({
      timestamp: z.string(),
      width: z.number(),
      height: z.number(),
      tab_id: z.string().nullable(),
      frame: z.number().int(),
    }),
  })
  .meta({ id: 'ScreencastFrame' });

/** Named `cursor_position` events of a desktop's screencast: where the pointer is, in screen pixels. */
export const CursorPosition = z
  .object({ x: z.number(), y: z.number() })
  .meta({ id: 'CursorPosition' });

/** Most computers one screencasts stream follows (a grid of thumbnails). */
export const MAX_SCREENCASTS = 50;

/** Query of GET /screencasts: several computers' frames on one connection. */
export const ScreencastsQuery = ScreencastQuery.extend({
  ids: z
    .string()
    .transform((text) => [...new Set(text.split(',').filter(Boolean))])
    .pipe(z.array(z.string().min(1).max(200)).min(1).max(MAX_SCREENCASTS))
    .describe('The computers, comma-separated.'),
});

/** A frame of GET /screencasts: which computer it shows, and the frame. */
export const ComputerFrame = ScreencastFrame.extend({ computer_id: z.string() }).meta({
  id: 'ComputerFrame',
});
