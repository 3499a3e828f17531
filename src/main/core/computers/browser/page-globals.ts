/**
 * The page globals that functions run inside a page (page.evaluate) read. Core is type-checked
 * without the DOM library, so such a function casts `globalThis` to this instead; the cast vanishes
 * when compiled, and the function still runs in the page with the page's own globals.
 */
export type PageGlobals = {
  document: {
    title: string;
    doctype: object | null;
    documentElement: { scrollWidth: number; scrollHeight: number; outerHTML: string };
    body: {
      childElementCount: number;
      replaceChildren(...nodes: object[]): void;
    } | null;
    createElement(tag: string): PageElement;
  };
  location: { href: string };
  innerWidth: number;
  innerHeight: number;
  scrollX: number;
  scrollY: number;
  devicePixelRatio: number;
  XMLSerializer: new () => { serializeToString(node: object): string };
  stop(): void;
};

/** What such a function does with an element it makes. */
export type PageElement = {
  textContent: string | null;
  style: { cssText: string };
  append(...nodes: object[]): void;
};
