// Drives a Benchtop computer with Playwright over its cdp_url (docs/API.md §16).
// LIGHTCONE_BASE_URL=http://127.0.0.1:4422 TZAFON_API_KEY=sk_… node examples/cdp/playwright.mjs
import { chromium } from 'playwright-core';

const base = process.env.LIGHTCONE_BASE_URL ?? 'http://127.0.0.1:4422';
const key = process.env.TZAFON_API_KEY;
if (!key) throw new Error('set TZAFON_API_KEY to a Benchtop key (benchtop keys create)');

async function api(method, path, body) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return response.status === 204 ? undefined : response.json();
}

const computer = await api('POST', '/computers', { cdp: true });
try {
  const browser = await chromium.connectOverCDP(computer.cdp_url);
  const page = await browser.contexts()[0].newPage();
  await page.setContent(
    '<h1 id="out">not clicked</h1><button onclick="out.textContent = `clicked by Playwright`">Go</button>',
  );
  await page.click('button');
  console.log(`page says: ${await page.textContent('#out')}`);
  const tabs = await api('GET', `/computers/${computer.id}/tabs`);
  console.log(`Benchtop lists ${tabs.result.tabs.length} tabs of ${computer.id}`);
  // Disconnects; the computer keeps running until it is deleted.
  await browser.close();
} finally {
  await api('DELETE', `/computers/${computer.id}`);
}
