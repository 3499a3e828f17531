import type { Page } from 'playwright-core';
import type { PageElement, PageGlobals } from './page-globals.js';

/** A page Chromium shows in place of one it could not load. */
export const ERROR_PAGE = /^chrome-error:/;

export type LoadFailure = { url: string; reason?: string };

/**
 * Where Chrome shows "This site can't be reached", Chromium's headless shell commits an empty
 * page: a person at the live view, a screenshot and a model reading it would see a blank screen
 * and nothing of what failed. This fills such an empty error page with what failed (the URL,
 * and the reason when the load was Benchtop's own), titled by the host as Chrome titles it.
 * Chrome's own error page (a full Chromium's) is left as it is. Without `failure.url`, the URL
 * is the failed navigation's history entry (the page's own URL is chrome-error://chromewebdata/).
 */
export async function describeLoadFailure(page: Page, failure?: LoadFailure): Promise<void> {
  const url = failure?.url ?? (await failedUrl(page));
  if (!url || !ERROR_PAGE.test(page.url())) return;
  await page.evaluate(fill, { url, reason: failure?.reason ?? null });
}

/** The URL of the navigation that failed: the current entry of the tab's history. */
async function failedUrl(page: Page): Promise<string | undefined> {
  // A session of its own: the error page runs in a process of its own, where a session made
  // for the page before has been detached.
  const session = await page.context().newCDPSession(page);
  try {
    const { entries, currentIndex } = await session.send('Page.getNavigationHistory');
    return entries[currentIndex]?.url;
  } finally {
    await session.detach().catch(() => {});
  }
}

/** Runs in the page. A described page may be described again with a reason, never without. */
function fill({ url, reason }: { url: string; reason: string | null }): void {
  const { document, location } = globalThis as unknown as PageGlobals;
  const { body } = document;
  // The tab may have gone on to another page since: that one is left alone.
  if (!body || !location.href.startsWith('chrome-error:')) return;
  const ours = body.querySelector('[data-load-failure]');
  if ((body.childElementCount > 0 && !ours) || (ours && !reason)) return;
  let host = url;
  try {
    host = new URL(url).host || url;
  } catch {
    // Not a URL Chromium could parse either: shown as it is.
  }
  const element = (tag: string, text: string, css: string): PageElement => {
    const made = document.createElement(tag);
    made.textContent = text;
    made.style.cssText = css;
    return made;
  };
  const main = element('main', '', 'font: 16px sans-serif; color: #202124; margin: 80px 10%;');
  main.setAttribute('data-load-failure', '');
  main.append(
    element('h1', 'This site can’t be reached', 'font-size: 24px; font-weight: 500;'),
    element('p', url, 'overflow-wrap: anywhere;'),
  );
  if (reason) main.append(element('p', reason, 'color: #5f6368;'));
  document.title = host;
  body.replaceChildren(main);
}
