import sharp from 'sharp';
import type { Point } from '../computers/action.js';

const RADIUS = 22;

/** The screenshot with a ring and cross hairs where the action would act, for a person to see. */
export async function drawTarget(png: Buffer, at: Point): Promise<Buffer> {
  const { width = 0, height = 0 } = await sharp(png).metadata();
  const x = Math.round(at.x);
  const y = Math.round(at.y);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <circle cx="${x}" cy="${y}" r="${RADIUS}" fill="none" stroke="white" stroke-width="7"/>
    <circle cx="${x}" cy="${y}" r="${RADIUS}" fill="none" stroke="#e11d48" stroke-width="4"/>
    <path d="M${x - RADIUS - 10} ${y}h${RADIUS - 4}M${x + 14} ${y}h${RADIUS - 4}M${x} ${y - RADIUS - 10}v${RADIUS - 4}M${x} ${y + 14}v${RADIUS - 4}"
      stroke="#e11d48" stroke-width="3"/>
  </svg>`;
  return sharp(png)
    .composite([{ input: Buffer.from(svg), top: 0, left: 0 }])
    .png()
    .toBuffer();
}
