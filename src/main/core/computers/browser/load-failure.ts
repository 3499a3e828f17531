import type { Page } from 'playwright-core';
import type { PageElement, PageGlobals } from './page-globals.js';

/** A page Chromium shows in place of one it could not load. */
export const ERROR_PAGE = /^chrome-error:/;

export type LoadFailure = { url: string; reason?: string };

/**
 * Where Chrome shows "This site can't be reached", Chromium's headless shell commits an empty
 * page: a person at the live view, a screenshot and a model reading it would see a blank screen
 * and nothing of what failed. This fills such an empty error page with what failed (the URL and
 * the reason), titled by the host as Chrome titles it. Chrome's own error page (a full
 * Chromium's) is left as it is.
 */
export async function describeLoadFailure(page: Page, failure: LoadFailure): Promise<void> {
  if (!ERROR_PAGE.test(page.url())) return;
  await page.evaluate(fill, { url: failure.url, reason: failure.reason ?? null });
}

/** Runs in the page. */
function fill({ url, reason }: { url: string; reason: string | null }): void {
  const { document, location } = globalThis as unknown as PageGlobals;
  const { body } = document;
  // The tab may have gone on to another page since: that one is left alone.
  if (!body || !location.href.startsWith('chrome-error:')) return;
  if (body.childElementCount > 0) return;
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
  main.append(
    element('h1', 'This site can’t be reached', 'font-size: 24px; font-weight: 500;'),
    element('p', url, 'overflow-wrap: anywhere;'),
  );
  if (reason) main.append(element('p', reason, 'color: #5f6368;'));
  document.title = host;
  body.replaceChildren(main);
}
