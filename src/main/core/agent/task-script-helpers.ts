/**
 * The code every exported script starts with (after its header comment): the SDK client and
 * the checks before each step. The region hash repeats step-check.ts's arithmetic exactly (a
 * PNG decoded with the language's own zlib), so a script and a replay agree on a desktop's look.
 */

/** The numbers both languages' checks share with step-check.ts and the replay. */
export type Limits = { region: number; tolerance: number; brightness: number; settleMs: number };

export const PYTHON_HELPERS = ({ region, tolerance, brightness, settleMs }: Limits) => `
import base64
import html
import math
import os
import re
import sys
import time
import zlib

from tzafon import Lightcone

client = Lightcone()  # reads LIGHTCONE_BASE_URL and TZAFON_API_KEY

REGION = ${region}
TOLERANCE = ${tolerance}
BRIGHTNESS_TOLERANCE = ${brightness}
SETTLE_SECONDS = ${settleMs / 1000}


def done(name, result):
    """Stops the script when a step's action failed."""
    if result.status != "success":
        sys.exit(f"{name} failed: {result.error_message}")


def squash(text):
    return re.sub(r"\\s+", " ", text).strip()


def check(computer_id, name, **expected):
    """Stops the script when the screen is not where the run was before this step (after
    looking again for a moment: the previous step's page may still be loading)."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while True:
        why = differs(computer_id, **expected)
        if why is None:
            return
        if time.monotonic() >= deadline:
            sys.exit(f"{name} no longer fits the screen: {why}")
        time.sleep(0.1)


def differs(computer_id, url=None, text=None, region_hash=None, x=None, y=None):
    """How the screen differs from the run's, or None."""
    if url is not None or text is not None:
        page = client.computers.html(computer_id).result or {}
        if url is not None and page.get("url") != url:
            return f"the page is {page.get('url')}, the run was on {url}"
        source = html.unescape(page.get("html_content") or "")
        shown = [squash(source), squash(re.sub(r"<[^>]*>", " ", source))]
        if text is not None and not any(squash(text) in part for part in shown):
            return f"the page does not show {text!r}"
    if region_hash is not None and x is not None and y is not None:
        shot = client.computers.screenshot(computer_id, base64=True).result or {}
        now = hash_region(*decode_png(base64.b64decode(shot["base64"])), x, y)
        distance = bin(int(now[:16], 16) ^ int(region_hash[:16], 16)).count("1")
        brightness = abs(int(now[16:], 16) - int(region_hash[16:], 16))
        if distance > TOLERANCE or brightness > BRIGHTNESS_TOLERANCE:
            return f"it looks different around {x}, {y} ({distance} of 64 hash bits differ, brightness by {brightness})"
    return None


def decode_png(data):
    """Width, height, channels and rows of an 8-bit PNG."""
    pos, idat = 8, b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            if body[8] != 8 or body[12] != 0:
                sys.exit("the screenshot is not an 8-bit, non-interlaced PNG")
            channels = {0: 1, 2: 3, 4: 2, 6: 4}[body[9]]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows = zlib.decompress(idat), width * channels, []
    previous = bytearray(stride)
    for row in range(height):
        start = row * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else corner)) & 255
        rows.append(line)
        previous = line
    return width, height, channels, rows


def hash_region(width, height, channels, rows, x, y):
    """A 64-bit difference hash of the REGION x REGION pixels around x, y (16 hex digits)."""
    side = min(REGION, width, height)
    left = max(0, min(math.floor(math.floor(x + 0.5) - side / 2), width - side))
    top = max(0, min(math.floor(math.floor(y + 0.5) - side / 2), height - side))
    cells = []
    for row in range(8):
        for col in range(9):
            x0, x1 = left + (col * side) // 9, left + ((col + 1) * side) // 9
            y0, y1 = top + (row * side) // 8, top + ((row + 1) * side) // 8
            total = 0
            for yy in range(y0, y1):
                line = rows[yy]
                for xx in range(x0, x1):
                    i = xx * channels
                    total += (line[i] * 299 + line[i + 1] * 587 + line[i + 2] * 114) / 1000
            cells.append(total / max(1, (x1 - x0) * (y1 - y0)))
    bits = "".join("1" if cells[r * 9 + c] < cells[r * 9 + c + 1] else "0" for r in range(8) for c in range(8))
    return f"{int(bits, 2):016x}{math.floor(sum(cells) / len(cells)):02x}"
`;

export const TYPESCRIPT_HELPERS = ({ region, tolerance, brightness, settleMs }: Limits) => `
import Lightcone from '@tzafon/lightcone';
import { inflateSync } from 'node:zlib';

const client = new Lightcone(); // reads LIGHTCONE_BASE_URL and TZAFON_API_KEY

const REGION = ${region};
const TOLERANCE = ${tolerance};
const BRIGHTNESS_TOLERANCE = ${brightness};
const SETTLE_MS = ${settleMs};

type Result = { status?: string; error_message?: string; result?: Record<string, unknown> };
type Check = { url?: string; text?: string; region_hash?: string; x?: number; y?: number };

/** Stops the script when a step's action failed. */
function done(name: string, result: Result): void {
  if (result.status !== 'success') throw new Error(\`\${name} failed: \${result.error_message}\`);
}

const squash = (text: string) => text.replace(/\\s+/g, ' ').trim();
const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\\u00a0' };
const unescape = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\\d+|\\w+);/gi, (whole, name: string) =>
    name[0] === '#'
      ? String.fromCodePoint(name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10))
      : (ENTITIES[name] ?? whole),
  );

/**
 * Stops the script when the screen is not where the run was before this step (after looking
 * again for a moment: the previous step's page may still be loading).
 */
async function check(computerId: string, name: string, expected: Check): Promise<void> {
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const why = await differs(computerId, expected);
    if (why === null) return;
    if (Date.now() >= deadline) throw new Error(\`\${name} no longer fits the screen: \${why}\`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** How the screen differs from the run's, or null. */
async function differs(computerId: string, expected: Check): Promise<string | null> {
  if (expected.url !== undefined || expected.text !== undefined) {
    const page = ((await client.computers.html(computerId)).result ?? {}) as Record<string, string>;
    if (expected.url !== undefined && page.url !== expected.url) {
      return \`the page is \${page.url}, the run was on \${expected.url}\`;
    }
    const source = unescape(page.html_content ?? '');
    const shown = [squash(source), squash(source.replace(/<[^>]*>/g, ' '))];
    if (expected.text !== undefined && !shown.some((part) => part.includes(squash(expected.text!)))) {
      return \`the page does not show "\${expected.text}"\`;
    }
  }
  if (expected.region_hash !== undefined && expected.x !== undefined && expected.y !== undefined) {
    const shot = (await client.computers.screenshot(computerId, { base64: true })).result ?? {};
    const now = hashRegion(decodePng(Buffer.from(String(shot.base64), 'base64')), expected.x, expected.y);
    let diff = BigInt('0x' + now.slice(0, 16)) ^ BigInt('0x' + expected.region_hash.slice(0, 16));
    let distance = 0;
    for (; diff > 0n; diff >>= 1n) distance += Number(diff & 1n);
    const brightness = Math.abs(parseInt(now.slice(16), 16) - parseInt(expected.region_hash.slice(16), 16));
    if (distance > TOLERANCE || brightness > BRIGHTNESS_TOLERANCE) {
      return \`it looks different around \${expected.x}, \${expected.y} (\${distance} of 64 hash bits differ, brightness by \${brightness})\`;
    }
  }
  return null;
}

type Image = { width: number; height: number; channels: number; rows: Uint8Array[] };

/** The rows of an 8-bit PNG. */
function decodePng(data: Buffer): Image {
  let pos = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Buffer[] = [];
  while (pos < data.length) {
    const length = data.readUInt32BE(pos);
    const kind = data.toString('latin1', pos + 4, pos + 8);
    const body = data.subarray(pos + 8, pos + 8 + length);
    if (kind === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      if (body[8] !== 8 || body[12] !== 0) throw new Error('the screenshot is not an 8-bit, non-interlaced PNG');
      channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[body[9]!]!;
    } else if (kind === 'IDAT') idat.push(body);
    pos += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const rows: Uint8Array[] = [];
  let previous = new Uint8Array(stride);
  for (let row = 0; row < height; row++) {
    const start = row * (stride + 1);
    const kind = raw[start]!;
    const line = Uint8Array.from(raw.subarray(start + 1, start + 1 + stride));
    for (let i = 0; i < stride; i++) {
      const left = i >= channels ? line[i - channels]! : 0;
      const up = previous[i]!;
      const corner = i >= channels ? previous[i - channels]! : 0;
      if (kind === 1) line[i] = (line[i]! + left) & 255;
      else if (kind === 2) line[i] = (line[i]! + up) & 255;
      else if (kind === 3) line[i] = (line[i]! + ((left + up) >> 1)) & 255;
      else if (kind === 4) {
        const p = left + up - corner;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - corner)];
        line[i] = (line[i]! + (pa <= pb && pa <= pc ? left : pb <= pc ? up : corner)) & 255;
      }
    }
    rows.push(line);
    previous = line;
  }
  return { width, height, channels, rows };
}

/** A 64-bit difference hash of the REGION × REGION pixels around x, y (16 hex digits). */
function hashRegion({ width, height, channels, rows }: Image, x: number, y: number): string {
  const side = Math.min(REGION, width, height);
  const left = Math.max(0, Math.min(Math.floor(Math.round(x) - side / 2), width - side));
  const top = Math.max(0, Math.min(Math.floor(Math.round(y) - side / 2), height - side));
  const cells: number[] = [];
  for (let row = 0; row < 8; row++) {
    for (let col = 0; col < 9; col++) {
      const [x0, x1] = [left + Math.floor((col * side) / 9), left + Math.floor(((col + 1) * side) / 9)];
      const [y0, y1] = [top + Math.floor((row * side) / 8), top + Math.floor(((row + 1) * side) / 8)];
      let total = 0;
      for (let yy = y0; yy < y1; yy++) {
        for (let xx = x0; xx < x1; xx++) {
          const i = xx * channels;
          total += (rows[yy]![i]! * 299 + rows[yy]![i + 1]! * 587 + rows[yy]![i + 2]! * 114) / 1000;
        }
      }
      cells.push(total / Math.max(1, (x1 - x0) * (y1 - y0)));
    }
  }
  let hex = '';
  for (let row = 0; row < 8; row++) {
    let byte = 0;
    for (let col = 0; col < 8; col++) byte = (byte << 1) | (cells[row * 9 + col]! < cells[row * 9 + col + 1]! ? 1 : 0);
    hex += byte.toString(16).padStart(2, '0');
  }
  const mean = cells.reduce((sum, cell) => sum + cell, 0) / cells.length;
  return hex + Math.floor(mean).toString(16).padStart(2, '0');
}
`;
