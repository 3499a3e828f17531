import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type ApiResponse, type TestServer } from '../helpers/test-server.js';

/** Enough of a PNG for the image check, which reads the first bytes. */
function png(size: number): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([signature, Buffer.alloc(Math.max(0, size - signature.length), 7)]);
}

const dataUrl = (size = 64) => `data:image/png;base64,${png(size).toString('base64')}`;

type ImageServer = {
  url: string;
  /** The most /held requests it had open at once. */
  mostAtOnce: number;
  close(): Promise<void>;
};

/**
 * A real image server on 127.0.0.1: `/png?bytes=N` answers a PNG of N bytes, `/slow` sends its
 * headers and then the image a byte every 100 ms, `/held` keeps each answer back until five are
 * open (or half a second has passed) and counts how many were open at once, `/to?url=U`
 * redirects to U.
 */
async function startImageServer(): Promise<ImageServer> {
  let open = 0;
  let waiting: Array<() => void> = [];
  const state = { mostAtOnce: 0 };
  const trickles = new Set<NodeJS.Timeout>();
  const server: Server = createServer((req, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/png') {
      const body = png(Number(url.searchParams.get('bytes') ?? 64));
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': body.length });
      res.end(body);
    } else if (url.pathname === '/slow') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.write(png(8));
      const timer = setInterval(() => res.write(Buffer.from([0])), 100);
      trickles.add(timer);
      // Until the client gives up, or at most a minute.
      const stop = () => {
        clearInterval(timer);
        trickles.delete(timer);
        res.end();
      };
      res.on('close', stop);
      setTimeout(stop, 60_000).unref();
    } else if (url.pathname === '/held') {
      open++;
      state.mostAtOnce = Math.max(state.mostAtOnce, open);
      const answer = () => {
        open--;
        res.writeHead(200, { 'content-type': 'image/png' }).end(png(64));
      };
      if (open >= 5) {
        for (const release of waiting) release();
        waiting = [];
        answer();
        return;
      }
      let answered = false;
      const once = () => {
        if (answered) return;
        answered = true;
        answer();
      };
      waiting.push(once);
      setTimeout(once, 500);
    } else if (url.pathname === '/to') {
      res.writeHead(302, { location: url.searchParams.get('url')! }).end();
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get mostAtOnce() {
      return state.mostAtOnce;
    },
    set mostAtOnce(value: number) {
      state.mostAtOnce = value;
    },
    close: () =>
      new Promise((resolve) => {
        for (const timer of trickles) clearInterval(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const scripts = mkdtempSync(join(tmpdir(), 'benchtop-hardening-'));
const script = join(scripts, 'done.json');
writeFileSync(script, JSON.stringify({ turns: [{ output: [{ type: 'message', text: 'seen' }] }] }));

const userImages = (...urls: string[]) => [
  {
    role: 'user',
    content: [
      { type: 'input_text', text: 'What is on these?' },
      ...urls.map((url) => ({ type: 'input_image', image_url: url })),
    ],
  },
];

describe('failed authentications and image URLs', () => {
  let server: TestServer;
  let images: ImageServer;
  const LIMIT = 3;
  const respond = (...urls: string[]) =>
    server.request('POST', '/v1/responses', { input: userImages(...urls) });
  const expect400 = (answer: ApiResponse, param: string, message: RegExp) => {
    expect(answer.status, answer.text).toBe(400);
    expect(answer.body).toMatchObject({ code: 'invalid_request', param });
    expect(answer.body.message).toMatch(message);
  };

  beforeAll(async () => {
    images = await startImageServer();
    server = await startTestServer({
      browser: { warm_pool: 0 },
      server: { allowed_hosts: ['localhost', '127.0.0.1', 'benchtop.test'] },
      limits: {
        auth_failures_before_block: LIMIT,
        images_per_request: 4,
        image_bytes_per_request: 100_000,
        image_fetch_timeout_seconds: 1,
      },
      models: { default: 'done', providers: { done: { provider: 'scripted', script } } },
    });
  });
  afterAll(async () => {
    await server.close();
    await images.close();
    rmSync(scripts, { recursive: true, force: true });
  });
  beforeEach(() => {
    server.core.guards.failures.lift('127.0.0.1');
  });

  it('blocks guessing from an address, not the owner: a valid key keeps working', async () => {
    for (let i = 0; i < LIMIT; i++) {
      const wrong = await server.request('GET', '/computers', undefined, {
        key: `sk_wrong_${i}aaaaaaaaaaaaaaaa`,
      });
      expect(wrong.status).toBe(401);
    }
    expect(server.core.guards.failures.blocks()).toMatchObject([
      { ip: '127.0.0.1', failures: LIMIT },
    ]);

    const owner = await server.request('GET', '/computers');
    expect(owner.status, owner.text).toBe(200);
    expect((await server.request('POST', '/v1/responses', { input: 'hi' })).body.status).toBe(
      'completed',
    );

    // A wrong key and no key get the same answer: a guess learns nothing from a blocked address.
    for (const key of ['sk_wrong_xaaaaaaaaaaaaaaaa', server.key.slice(0, -1) + 'x', null]) {
      const blocked = await server.request('GET', '/computers', undefined, { key });
      expect(blocked.status).toBe(403);
      expect(blocked.body.code).toBe('ip_blocked');
      expect(blocked.body.message).toContain('127.0.0.1');
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(500);
    }
    // Still blocked, and the block did not grow or move while it was answered.
    expect(server.core.guards.failures.blocks()).toMatchObject([
      { ip: '127.0.0.1', failures: LIMIT },
    ]);
    expect((await server.request('GET', '/computers')).status).toBe(200);
  });

  it('refuses image URLs that point at Benchtop itself, without counting a failed authentication', async () => {
    const { port } = new URL(server.url);
    const self = [
      `${server.url}/computers`,
      `http://localhost:${port}/keys`,
      `http://benchtop.test:${port}/settings`,
      `http://127.0.0.2:${port}/computers`,
      `http://[::ffff:127.0.0.1]:${port}/health`,
      `${images.url}/to?url=${encodeURIComponent(`${server.url}/computers`)}`,
    ];
    for (const url of self) {
      const answer = await respond(dataUrl(), url);
      expect400(answer, 'input.0.content.2.image_url', /this Benchtop server itself/);
    }
    expect(server.core.guards.failures.blocks()).toEqual([]);
    // Nothing counted against the address: a request without a key is told so, not blocked.
    expect((await server.request('GET', '/computers', undefined, { key: null })).status).toBe(401);

    // Its screenshot URLs are images, under any of its names, read from disk.
    const path = await server.core.screenshots.save('comp_hardening', png(64));
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `benchtop.test:${port}`]) {
      const answer = await respond(`http://${host}${path}`);
      expect(answer.status, answer.text).toBe(200);
      expect(answer.body.status).toBe('completed');
    }
  });

  it('caps the number of images of one request', async () => {
    const fine = await respond(dataUrl(), dataUrl(), dataUrl(), dataUrl());
    expect(fine.body.status, fine.text).toBe('completed');
    const answer = await respond(dataUrl(), dataUrl(), dataUrl(), dataUrl(), dataUrl());
    expect400(answer, 'input.0.content.5.image_url', /limits\.images_per_request \(4\)/);
    expect(answer.body.message).toContain('5 images');
  });

  it('caps the bytes the images of one request add up to', async () => {
    const fine = await respond(`${images.url}/png?bytes=40000`, `${images.url}/png?bytes=40000`);
    expect(fine.body.status, fine.text).toBe('completed');
    const fetched = await respond(
      `${images.url}/png?bytes=40000`,
      `${images.url}/png?bytes=40000`,
      `${images.url}/png?bytes=40000`,
    );
    expect(fetched.status, fetched.text).toBe(400);
    expect(fetched.body.param).toMatch(/^input\.0\.content\.[123]\.image_url$/);
    expect(fetched.body.message).toMatch(/limits\.image_bytes_per_request/);
    // Inline images count too.
    const inline = await respond(dataUrl(60_000), dataUrl(60_000));
    expect400(inline, 'input.0.content.2.image_url', /limits\.image_bytes_per_request/);
  });

  it('fetches the images of one request a few at a time', async () => {
    images.mostAtOnce = 0;
    const settings = server.core.settingsSource;
    const before = settings.current();
    settings.replace({ ...before, limits: { ...before.limits, images_per_request: 8 } });
    try {
      const urls = Array.from({ length: 8 }, (_, i) => `${images.url}/held?i=${i}`);
      const answer = await respond(...urls);
      expect(answer.body.status, answer.text).toBe('completed');
    } finally {
      settings.replace(before);
    }
    expect(images.mostAtOnce).toBeLessThanOrEqual(4);
    expect(images.mostAtOnce).toBeGreaterThanOrEqual(2);
  });

  it('answers 400 naming the field when an image server is too slow sending the body', async () => {
    const answer = await respond(dataUrl(), `${images.url}/slow`);
    expect400(answer, 'input.0.content.2.image_url', /did not send the whole image within 1 s/);
    expect(answer.body.message).toContain('limits.image_fetch_timeout_seconds');
    // And it keeps serving.
    expect((await respond(dataUrl())).body.status).toBe('completed');
  });
});

describe('rate limit per organization', () => {
  let server: TestServer;
  beforeAll(async () => {
    // One token every five seconds: the burst is spent long before the bucket refills.
    server = await startTestServer({
      browser: { warm_pool: 0 },
      limits: { requests_per_second: 0.2, burst: 10 },
    });
  });
  afterAll(() => server.close());

  it('gives all keys of one organization one budget; other organizations keep theirs', async () => {
    const first = server.core.keys.create('team').key;
    const second = server.core.keys.create('team').key;
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 20 && !answers.some((answer) => answer.status === 429); i++) {
      const key = i % 2 === 0 ? first : second;
      answers.push(await server.request('GET', '/computers', undefined, { key }));
    }
    expect(answers.map((answer) => answer.status)).toEqual([...Array(10).fill(200), 429]);
    const limited = answers.at(-1)!;
    expect(limited.body.code).toBe('rate_limited');
    expect(limited.body.message).toContain('"team"');
    expect(limited.body.message).toContain('limits.requests_per_second');
    // Both keys of the team are out of requests, and so is a key made now.
    expect((await server.request('GET', '/computers', undefined, { key: first })).status).toBe(429);
    const third = server.core.keys.create('team').key;
    expect((await server.request('GET', '/computers', undefined, { key: third })).status).toBe(429);

    const other = server.core.keys.create('other').key;
    expect((await server.request('GET', '/computers', undefined, { key: other })).status).toBe(200);
    expect((await server.request('GET', '/computers')).status).toBe(200);
  });
});
