import { open, type FileHandle } from 'node:fs/promises';

/**
 * Gives every frame of a WebM written by ffmpeg its duration: each SimpleBlock becomes a
 * BlockGroup with a BlockDuration (until the next frame; the last one is left as it is) and,
 * for a frame that is not a key frame, a ReferenceBlock; the Cues and SeekHead are written anew for
 * the moved clusters, and a video track gets a nominal DefaultDuration (withNominalRate). Nothing
 * else changes: the same encoded frames at the same times, the same Info, Chapters and Tags.
 *
 * Why: ffmpeg's WebM muxer writes video frames as SimpleBlocks, which carry no duration, and a
 * screen recording's frames are far apart and irregular (one frame for as long as the screen stays
 * still). Chromium, seeking a paused video, shows the first decoded frame that "covers" the target
 * time, using the frame's duration when the file gives one and otherwise the average over the
 * frames decoded: a frame shortly before a quick change covers it, and the video shows the screen
 * before the change at that change’s time. A track-wide DefaultDuration alone does not fit frames of
 * irregular length (Chromium then skips frames after a long still stretch while playing), and no
 * muxer at hand writes a duration per video frame, hence this rewrite (a few EBML elements; the
 * frames are copied as they are, a cluster at a time).
 *
 * Returns false, writing nothing, when the file has an element of unknown size (a live stream):
 * such a file is left as it is.
 */
export async function addBlockDurations(input: string, output: string): Promise<boolean> {
  const source = await open(input, 'r');
  try {
    const layout = await readLayout(source);
    if (!layout) return false;
    const target = await open(output, 'w');
    try {
      await writeWithDurations(source, target, layout);
    } finally {
      await target.close();
    }
    return true;
  } finally {
    await source.close();
  }
}

const ID = {
  Segment: 0x18538067,
  SeekHead: 0x114d9b74,
  Seek: 0x4dbb,
  SeekID: 0x53ab,
  SeekPosition: 0x53ac,
  Info: 0x1549a966,
  TimestampScale: 0x2ad7b1,
  Duration: 0x4489,
  Tracks: 0x1654ae6b,
  TrackEntry: 0xae,
  TrackType: 0x83,
  DefaultDuration: 0x23e383,
  Chapters: 0x1043a770,
  Tags: 0x1254c367,
  Attachments: 0x1941a469,
  Cues: 0x1c53bb6b,
  CuePoint: 0xbb,
  CueTime: 0xb3,
  CueTrackPositions: 0xb7,
  CueTrack: 0xf7,
  CueClusterPosition: 0xf1,
  CueRelativePosition: 0xf0,
  Cluster: 0x1f43b675,
  Timestamp: 0xe7,
  SimpleBlock: 0xa3,
  BlockGroup: 0xa0,
  Block: 0xa1,
  BlockDuration: 0x9b,
  ReferenceBlock: 0xfb,
  Void: 0xec,
  Crc32: 0xbf,
} as const;

/** TrackType of a video track. */
const VIDEO_TRACK = 1;
/** The nominal frame length given to video tracks (ns): 30 frames a second. */
const NOMINAL_FRAME_NS = 33_333_333;

/** Top-level elements the new SeekHead points to, when the file has them. */
const INDEXED: number[] = [ID.Info, ID.Tracks, ID.Chapters, ID.Tags, ID.Attachments];
/** Top-level elements not copied: written anew (SeekHead, Cues) or of no use (Void, CRC-32). */
const DROPPED = new Set<number>([ID.SeekHead, ID.Cues, ID.Void, ID.Crc32]);
/** Children of a cluster dropped: positions and sizes that no longer hold, padding, checksums. */
const DROPPED_IN_CLUSTER = new Set<number>([
  0xa7 /* Position */,
  0xab /* PrevSize */,
  ID.Void,
  ID.Crc32,
]);

/** An element's place in a file or buffer: where its header starts, and its data. */
type Span = { id: number; start: number; dataStart: number; end: number };
type BlockInfo = { track: number; time: number; key: boolean };
type Layout = {
  ebmlHeader: Span;
  segment: Span;
  children: Span[];
  /** For each cluster (by its start): its blocks in order. */
  blocks: Map<number, BlockInfo[]>;
};

class Malformed extends Error {}

/** Reads the element headers of the file and the blocks' tracks, times and key flags. */
async function readLayout(file: FileHandle): Promise<Layout | undefined> {
  const { size } = await file.stat();
  const magic = Buffer.alloc(4);
  await file.read(magic, 0, 4, 0);
  if (magic.readUInt32BE() !== 0x1a45dfa3) throw new Malformed('not a WebM: no EBML header');
  const ebmlHeader = (await spanAt(file, 0, size))!;
  const segment = await spanAt(file, ebmlHeader.end, size);
  if (!segment) return undefined;
  if (segment.id !== ID.Segment) throw new Malformed('no Segment after the EBML header');
  const children: Span[] = [];
  const blocks = new Map<number, BlockInfo[]>();
  for (let at = segment.dataStart; at < segment.end;) {
    const child = await spanAt(file, at, segment.end);
    if (!child) return undefined;
    children.push(child);
    if (child.id === ID.Cluster) blocks.set(child.start, clusterBlocks(await dataOf(file, child)));
    at = child.end;
  }
  return { ebmlHeader, segment, children, blocks };
}

/** The blocks of a cluster's data, with their absolute times. */
function clusterBlocks(data: Buffer): BlockInfo[] {
  let base = 0;
  const found: BlockInfo[] = [];
  for (const child of spans(data)) {
    if (child.id === ID.Timestamp) base = readUint(data, child);
    else if (child.id === ID.SimpleBlock) {
      const block = blockHeader(data, child.dataStart, child.end);
      found.push({ ...block, time: base + block.relative, key: (data[block.flags]! & 0x80) !== 0 });
    } else if (child.id === ID.BlockGroup) {
      let block: ReturnType<typeof blockHeader> | undefined;
      let referenced = false;
      for (const part of spans(data, child.dataStart, child.end)) {
        if (part.id === ID.Block) block = blockHeader(data, part.dataStart, part.end);
        if (part.id === ID.ReferenceBlock) referenced = true;
      }
      if (!block) throw new Malformed('a BlockGroup without a Block');
      found.push({ ...block, time: base + block.relative, key: !referenced });
    }
  }
  return found;
}

/** A Block's or SimpleBlock's header: its track, time relative to the cluster, flags' offset. */
function blockHeader(data: Buffer, start: number, end: number) {
  const track = readVint(data, start, end, false);
  const at = start + track.length;
  if (at + 3 > end) throw new Malformed('a block shorter than its header');
  return { track: track.value, relative: data.readInt16BE(at), flags: at + 2 };
}

/**
 * How long each block lasts, by cluster start and index: until the next later block of its track.
 * The last ones get none (their SimpleBlock is kept; the track's nominal DefaultDuration applies):
 * the video's last frame, given the few ms to the end it shows for, made Chromium fire `ended`
 * 0.5–1.2 s after it (~30 ms without).
 */
function durationsOf(layout: Layout): Map<number, (number | undefined)[]> {
  const durations = new Map<number, (number | undefined)[]>();
  /** Per track, the blocks whose end is not known yet (a later block ends them). */
  const unended = new Map<
    number,
    { list: (number | undefined)[]; index: number; time: number }[]
  >();
  for (const [cluster, blocks] of layout.blocks) {
    const list: (number | undefined)[] = blocks.map(() => undefined);
    durations.set(cluster, list);
    blocks.forEach((block, index) => {
      const waiting = unended.get(block.track) ?? [];
      const still = waiting.filter((earlier) => {
        if (block.time <= earlier.time) return true;
        earlier.list[earlier.index] = block.time - earlier.time;
        return false;
      });
      still.push({ list, index, time: block.time });
      unended.set(block.track, still);
    });
  }
  return durations;
}

/** Writes the file again with the blocks' durations, new Cues and a new SeekHead. */
async function writeWithDurations(source: FileHandle, target: FileHandle, layout: Layout) {
  const durations = durationsOf(layout);
  const out = new Output(target);
  await out.write(await bytesOf(source, layout.ebmlHeader));
  // The Segment's size and the SeekHead's positions are known at the end: 8-byte fields, patched.
  await out.write(Buffer.concat([idBytes(ID.Segment), Buffer.alloc(8)]));
  const segmentSizeAt = out.position - 8;
  const segmentStart = out.position;
  const indexed = [
    ...INDEXED.filter((id) => layout.children.some((child) => child.id === id)),
    ID.Cues,
  ];
  const seeks = indexed.map((id) =>
    element(ID.Seek, [element(ID.SeekID, idBytes(id)), element(ID.SeekPosition, Buffer.alloc(8))]),
  );
  const seekHead = element(ID.SeekHead, seeks);
  const seekHeadAt = out.position;
  await out.write(seekHead);
  const positions = new Map<number, number>();
  const cues: Buffer[] = [];
  /** Each track's previous block time: a delta frame's ReferenceBlock, across clusters. */
  const previous = new Map<number, number>();
  for (const child of layout.children) {
    if (DROPPED.has(child.id)) continue;
    if (!positions.has(child.id)) positions.set(child.id, out.position - segmentStart);
    if (child.id === ID.Tracks) {
      await out.write(withNominalRate(await dataOf(source, child)));
      continue;
    }
    if (child.id !== ID.Cluster) {
      await out.write(await bytesOf(source, child));
      continue;
    }
    const rewritten = rewriteCluster(
      await dataOf(source, child),
      layout.blocks.get(child.start)!,
      durations.get(child.start)!,
      previous,
    );
    const clusterPosition = out.position - segmentStart;
    for (const key of rewritten.keys) {
      const track = element(ID.CueTrackPositions, [
        element(ID.CueTrack, uintBytes(key.track)),
        element(ID.CueClusterPosition, uintBytes(clusterPosition)),
        element(ID.CueRelativePosition, uintBytes(key.offset)),
      ]);
      cues.push(element(ID.CuePoint, [element(ID.CueTime, uintBytes(key.time)), track]));
    }
    await out.write(rewritten.cluster);
  }
  positions.set(ID.Cues, out.position - segmentStart);
  await out.write(element(ID.Cues, cues));
  await out.patch(segmentSizeAt, fixedSize(out.position - segmentStart));
  // Each Seek is 4DBB <size> 53AB <size> <id> 53AC 88 <8 bytes>: its position is its last 8 bytes.
  let at = seekHeadAt + seekHead.length - seeks.reduce((sum, seek) => sum + seek.length, 0);
  for (let index = 0; index < indexed.length; index++) {
    at += seeks[index]!.length;
    await out.patch(at - 8, uint64(positions.get(indexed[index]!)!));
  }
  await out.flush();
}

/**
 * The Tracks element with a DefaultDuration of 1/30 s on each video track, in place of any it had
 * (ffmpeg writes one from the rate it guessed: 25 a second, or 4 for segments joined). Every frame
 * but the last has its own BlockDuration, which comes first; the DefaultDuration is the last
 * frame's, and the constant rate of tools that want one (ffmpeg converting to MP4 otherwise
 * guessed it from the frames: 2 a second for a typical task, frames up to a quarter second off).
 */
function withNominalRate(tracks: Buffer): Buffer {
  const entries = [...spans(tracks)].map((entry) => {
    const whole = tracks.subarray(entry.start, entry.end);
    if (entry.id !== ID.TrackEntry) return whole;
    const children = [...spans(tracks, entry.dataStart, entry.end)];
    const video = children.some(
      (child) => child.id === ID.TrackType && readUint(tracks, child) === VIDEO_TRACK,
    );
    if (!video) return whole;
    return element(ID.TrackEntry, [
      ...children
        .filter((child) => child.id !== ID.DefaultDuration)
        .map((child) => tracks.subarray(child.start, child.end)),
      element(ID.DefaultDuration, uintBytes(NOMINAL_FRAME_NS)),
    ]);
  });
  return element(ID.Tracks, entries);
}

/**
 * A cluster with its SimpleBlocks as BlockGroups carrying their durations; BlockGroups and other
 * elements as they were. Also the key frames' times and places in it (relative to its data).
 */
function rewriteCluster(
  data: Buffer,
  blocks: BlockInfo[],
  durations: (number | undefined)[],
  previous: Map<number, number>,
) {
  const parts: Buffer[] = [];
  const keys: { track: number; time: number; offset: number }[] = [];
  let length = 0;
  let index = 0;
  for (const child of spans(data)) {
    if (DROPPED_IN_CLUSTER.has(child.id)) continue;
    let part = data.subarray(child.start, child.end);
    if (child.id === ID.SimpleBlock || child.id === ID.BlockGroup) {
      const block = blocks[index]!;
      const duration = durations[index];
      index++;
      if (block.key) keys.push({ track: block.track, time: block.time, offset: length });
      const before = previous.get(block.track);
      previous.set(block.track, block.time);
      if (child.id === ID.SimpleBlock && duration !== undefined) {
        const payload = Buffer.from(data.subarray(child.dataStart, child.end));
        const flags = blockHeader(payload, 0, payload.length).flags;
        // A Block's flags keep the invisible and lacing bits; key and discardable are SimpleBlock's.
        payload[flags] = payload[flags]! & 0x0e;
        const reference = block.key
          ? []
          : [element(ID.ReferenceBlock, sintBytes((before ?? block.time) - block.time))];
        part = element(ID.BlockGroup, [
          element(ID.Block, payload),
          element(ID.BlockDuration, uintBytes(duration)),
          ...reference,
        ]);
      }
    }
    parts.push(part);
    length += part.length;
  }
  return { cluster: element(ID.Cluster, parts), keys };
}

/** Sequential writes to a file, buffered, and writes at a given place. */
class Output {
  position = 0;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private written = 0;

  constructor(private readonly file: FileHandle) {}

  async write(bytes: Buffer): Promise<void> {
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    this.position += bytes.length;
    if (this.pendingBytes >= 1 << 20) await this.flush();
  }

  async patch(at: number, bytes: Buffer): Promise<void> {
    await this.flush();
    await this.file.write(bytes, 0, bytes.length, at);
  }

  async flush(): Promise<void> {
    const bytes = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    await this.file.write(bytes, 0, bytes.length, this.written);
    this.written += bytes.length;
  }
}

/** The element starting at `at` (its header read from the file), within `limit`. */
async function spanAt(file: FileHandle, at: number, limit: number): Promise<Span | undefined> {
  const head = Buffer.alloc(12);
  const { bytesRead } = await file.read(head, 0, 12, at);
  return headerAt(head, 0, bytesRead, at, limit);
}

/** The elements of `data` from `start` to `end`. */
function* spans(data: Buffer, start = 0, end = data.length): Generator<Span> {
  for (let at = start; at < end;) {
    const span = headerAt(data, at, end, 0, end);
    if (!span) throw new Malformed('an element of unknown size inside another');
    yield span;
    at = span.end;
  }
}

/**
 * The element whose header is at `at` in `data` (read up to `available`), its positions `base`
 * further on, within `limit`; undefined when its size is unknown.
 */
function headerAt(
  data: Buffer,
  at: number,
  available: number,
  base: number,
  limit: number,
): Span | undefined {
  const id = readVint(data, at, available, true);
  const size = readVint(data, at + id.length, available, false);
  if (size.unknown) return undefined;
  const start = base + at;
  const dataStart = start + id.length + size.length;
  const end = dataStart + size.value;
  if (end > limit)
    throw new Malformed(`an element (ID ${id.value.toString(16)}) past its parent's end`);
  return { id: id.value, start, dataStart, end };
}

async function dataOf(file: FileHandle, span: Span): Promise<Buffer> {
  return readAt(file, span.dataStart, span.end - span.dataStart);
}

async function bytesOf(file: FileHandle, span: Span): Promise<Buffer> {
  return readAt(file, span.start, span.end - span.start);
}

async function readAt(file: FileHandle, at: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, at);
  if (bytesRead !== length) throw new Malformed('the file ends inside an element');
  return buffer;
}

/**
 * An EBML variable-length integer: an ID keeps its length marker, a size does not (all value bits
 * set means unknown).
 */
function readVint(data: Buffer, at: number, end: number, keepMarker: boolean) {
  const first = data[at];
  if (first === undefined || at >= end || first === 0) throw new Malformed('a bad element header');
  const length = Math.clz32(first) - 23;
  if (at + length > end) throw new Malformed('an element header past the end');
  let value = keepMarker ? first : first & (0xff >> length);
  let allOnes = value === 0xff >> length;
  for (let index = 1; index < length; index++) {
    value = value * 256 + data[at + index]!;
    allOnes &&= data[at + index] === 0xff;
  }
  return { value, length, unknown: !keepMarker && allOnes };
}

function readUint(data: Buffer, span: Span): number {
  let value = 0;
  for (let at = span.dataStart; at < span.end; at++) value = value * 256 + data[at]!;
  return value;
}

function element(id: number, data: Buffer | Buffer[]): Buffer {
  const payload = Array.isArray(data) ? Buffer.concat(data) : data;
  return Buffer.concat([idBytes(id), sizeBytes(payload.length), payload]);
}

/** An ID's bytes (the ID as written, marker included). */
function idBytes(id: number): Buffer {
  return uintBytes(id);
}

/** The shortest size field for `size`. */
function sizeBytes(size: number): Buffer {
  for (let length = 1; length <= 8; length++) {
    // All value bits set is reserved for "unknown".
    if (size < 2 ** (7 * length) - 1) {
      const bytes = uint64(size).subarray(8 - length);
      bytes[0] = bytes[0]! | (0x80 >> (length - 1));
      return bytes;
    }
  }
  throw new Malformed('an element too large');
}

/** An 8-byte size field (patched once the size is known). */
function fixedSize(size: number): Buffer {
  const bytes = uint64(size);
  bytes[0] = 0x01;
  return bytes;
}

function uint64(value: number): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(value));
  return bytes;
}

/** An unsigned integer in as few bytes as it needs (at least one). */
function uintBytes(value: number): Buffer {
  const bytes = uint64(value);
  let start = 0;
  while (start < 7 && bytes[start] === 0) start++;
  return bytes.subarray(start);
}

/** A signed integer in as few bytes as it needs. */
function sintBytes(value: number): Buffer {
  for (let length = 1; length <= 6; length++) {
    if (value >= -(2 ** (8 * length - 1)) && value < 2 ** (8 * length - 1)) {
      const bytes = Buffer.alloc(length);
      bytes.writeIntBE(value, 0, length);
      return bytes;
    }
  }
  throw new Malformed('a reference too far');
}
