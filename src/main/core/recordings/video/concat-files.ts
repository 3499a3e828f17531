/**
 * The text files ffmpeg reads to encode a recording: the concat demuxer's list (which picture or
 * video, for how long) and an ffmetadata file of chapters.
 */

/** One action of the computer, as a chapter of its video. */
export type Chapter = { at: number /* epoch ms */; title: string };

/** One entry of a concat list: a file shown for `ms` milliseconds (the last one: until it ends). */
export type ListEntry = { file: string; ms?: number };

/**
 * The concat demuxer's list. `imageRate` gives every picture a 1 ms time base (the JPEG reader's
 * default of 25 frames a second would round each time to 40 ms); ffmpeg before 5.0 does not know
 * the `option` line, so it is left out for such a one.
 */
export function concatList(entries: ListEntry[], imageRate: boolean): string {
  const lines = ['ffconcat version 1.0'];
  for (const entry of entries) {
    lines.push(`file ${quote(entry.file)}`);
    if (imageRate) lines.push('option framerate 1000');
    if (entry.ms !== undefined) lines.push(`duration ${(entry.ms / 1000).toFixed(3)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** A path as one token of a concat list: in single quotes, a quote written as '\''. */
function quote(path: string): string {
  return `'${path.replaceAll("'", `'\\''`)}'`;
}

/**
 * Chapters as an ffmetadata file for a video that starts at `startedAt` and lasts `durationMs`:
 * each runs until the next one starts (the last one: to the end). Chapters before the start count
 * from 0; those after the end are left out. Undefined when none is left.
 */
export function chapterMetadata(
  chapters: Chapter[],
  startedAt: number,
  durationMs: number,
): string | undefined {
  const starts = chapters
    .map((chapter) => ({ start: Math.max(0, Math.round(chapter.at - startedAt)), chapter }))
    .filter(({ start }) => start <= durationMs)
    .sort((a, b) => a.start - b.start);
  if (starts.length === 0) return undefined;
  const blocks = starts.map(({ start, chapter }, index) =>
    [
      '[CHAPTER]',
      'TIMEBASE=1/1000',
      `START=${start}`,
      `END=${starts[index + 1]?.start ?? durationMs}`,
      `title=${escapeValue(chapter.title)}`,
    ].join('\n'),
  );
  return `;FFMETADATA1\n${blocks.join('\n')}\n`;
}

/** A value of an ffmetadata file: one line, with = ; # and \ escaped by a backslash. */
function escapeValue(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').replace(/[=;#\\]/g, (special) => `\\${special}`);
}
