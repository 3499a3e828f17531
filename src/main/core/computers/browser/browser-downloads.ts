import { copyFile, link, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Download, Page } from 'playwright-core';
import { CONTROL_CHARACTERS } from '../../../../shared/stealth.js';
import type { ComputerEventInput } from '../../events/computer-events.js';
import { DownloadDir } from '../download-dir.js';
import { firstLine } from './browser-host.js';

export type DownloadActivity = Extract<ComputerEventInput, { type: 'download' }>;

/** Longest name kept of what the site suggests; the extension survives the cut. */
const MAX_NAME = 120;

/**
 * What a browser computer downloads (a link, a navigate to a file, a CDP client's page), kept in
 * the computer's own folder under the name the site suggested, while the computer runs, and in
 * its recording (`keepIn`) for after. A file is listed once it is whole: it is written as a
 * hidden `.part` first.
 */
export class BrowserDownloads extends DownloadDir {
  /** Names saved or being saved, so two downloads of report.csv keep both. */
  private readonly taken = new Set<string>();
  private readonly pending = new Set<{ download: Download; saved: Promise<void> }>();
  private stopped = false;

  private readonly keepIn: string | undefined;
  private readonly fetch: (download: Download, to: string) => Promise<void>;

  constructor(
    dir: string,
    private readonly report: (activity: DownloadActivity) => void,
    options: {
      /** The recording's downloads folder, when the computer is recorded. */
      keepIn?: string;
      /** Writes a finished download to `to`: Playwright's saveAs unless the browser is elsewhere. */
      fetch?: (download: Download, to: string) => Promise<void>;
    } = {},
  ) {
    super(dir);
    this.keepIn = options.keepIn;
    this.fetch = options.fetch ?? ((download, to) => download.saveAs(to));
  }

  /** Saves what the page downloads from now on. */
  watch(page: Page, tabId: string): void {
    page.on('download', (download) => {
      if (this.stopped) return void download.cancel().catch(() => {});
      const entry = { download, saved: this.save(download, tabId) };
      this.pending.add(entry);
      void entry.saved.finally(() => this.pending.delete(entry));
    });
  }

  /** Cancels downloads under way (a computer ending), and waits for them to let go. */
  async stop(): Promise<void> {
    this.stopped = true;
    const pending = [...this.pending];
    await Promise.all(pending.map(({ download }) => download.cancel().catch(() => {})));
    await Promise.allSettled(pending.map(({ saved }) => saved));
  }

  /**
   * Keeps in the recording what Chromium wrote here by itself: a CDP client that sets its own
   * download behaviour has its files land in this folder without passing through `save`. Called
   * once the browser closed, so every file left is whole.
   */
  async keepTheRest(): Promise<void> {
    if (!this.keepIn) return;
    const kept = new Set(await readdir(this.keepIn).catch(() => [] as string[]));
    for (const { name } of await this.list()) if (!kept.has(name)) await this.keep(name);
  }

  private async save(download: Download, tabId: string): Promise<void> {
    const name = await this.freeName(safeName(download.suggestedFilename()));
    const partial = join(this.dir, `.${name}.part`);
    const event = { type: 'download' as const, tab_id: tabId, name, url: download.url() };
    this.report({ ...event, state: 'started', size_bytes: null, error: null });
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      await this.fetch(download, partial);
      if (this.stopped) throw new Error('the computer ended before the download finished');
      await rename(partial, join(this.dir, name));
      const { size } = await stat(join(this.dir, name));
      await this.keep(name);
      this.report({ ...event, state: 'saved', size_bytes: size, error: null });
    } catch (error) {
      this.taken.delete(name);
      await rm(partial, { force: true }).catch(() => {});
      const failure = await download.failure().catch(() => null);
      this.report({
        ...event,
        state: 'failed',
        size_bytes: null,
        error: failure ?? firstLine(error),
      });
    }
  }

  /**
   * A copy in the recording, so the file outlives the computer: a hard link (the same disk, no
   * bytes copied), else a copy. A recording that cannot take it does not fail the download.
   */
  private async keep(name: string): Promise<void> {
    if (!this.keepIn) return;
    const kept = join(this.keepIn, name);
    await mkdir(this.keepIn, { recursive: true, mode: 0o700 })
      .then(() =>
        link(join(this.dir, name), kept).catch(() => copyFile(join(this.dir, name), kept)),
      )
      .catch(() => {});
  }

  /** `name`, else `name (1).ext`, `name (2).ext`… not yet taken here or on disk. */
  private async freeName(name: string): Promise<string> {
    const onDisk = new Set(await readdir(this.dir).catch(() => [] as string[]));
    const dot = name.lastIndexOf('.');
    const [stem, extension] = dot > 0 ? [name.slice(0, dot), name.slice(dot)] : [name, ''];
    for (let n = 0; ; n++) {
      const candidate = n === 0 ? name : `${stem} (${n})${extension}`;
      if (!this.taken.has(candidate) && !onDisk.has(candidate)) {
        this.taken.add(candidate);
        return candidate;
      }
    }
  }
}

/**
 * A file name of this folder from what a site suggests: no folders, no control characters, no
 * leading dot (hidden files are the ones still being written), not too long; "download" when
 * nothing is left.
 */
export function safeName(suggested: string): string {
  const base = suggested.split(/[/\\]/).pop() ?? '';
  let name = base
    .replace(new RegExp(CONTROL_CHARACTERS.source, 'g'), '')
    .trim()
    .replace(/^\.+/, '');
  if (name.length > MAX_NAME) {
    const dot = name.lastIndexOf('.');
    const extension = dot > 0 && name.length - dot <= 16 ? name.slice(dot) : '';
    name = name.slice(0, MAX_NAME - extension.length) + extension;
  }
  return name || 'download';
}
