import { describe, expect, it } from 'vitest';
import { captureViewport } from '../../src/main/core/computers/browser/capture-viewport.js';

const PNG = Buffer.from('89504e470d0a1a0a', 'hex');
const NO_FRAME = 'Protocol error (Page.captureScreenshot): Unable to capture screenshot';

/** A CDP session whose captures answer in turn: an error message, else the PNG. */
function session(answers: Array<string | null>) {
  const sent: Array<{ method: string }> = [];
  return {
    sent,
    send: ((method: string) => {
      sent.push({ method });
      const failure = answers[Math.min(sent.length - 1, answers.length - 1)];
      return failure
        ? Promise.reject(new Error(failure))
        : Promise.resolve({ data: PNG.toString('base64') });
    }) as never,
  };
}

describe('captureViewport', () => {
  it('asks again, a few frames later, when the page has not drawn a frame yet', async () => {
    const cdp = session([NO_FRAME, NO_FRAME, null]);
    expect(await captureViewport(cdp)).toEqual(PNG);
    expect(cdp.sent.map((call) => call.method)).toEqual(Array(3).fill('Page.captureScreenshot'));
  });

  it('gives up after four tries, with what Chromium said', async () => {
    const cdp = session([NO_FRAME]);
    await expect(captureViewport(cdp)).rejects.toThrow('Unable to capture screenshot');
    expect(cdp.sent).toHaveLength(4);
  });

  it('fails at once for any other error (a closed page)', async () => {
    const cdp = session(['Target page, context or browser has been closed']);
    await expect(captureViewport(cdp)).rejects.toThrow('has been closed');
    expect(cdp.sent).toHaveLength(1);
  });
});
