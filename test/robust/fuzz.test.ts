import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../helpers/routes.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

/**
 * Generated malformed requests across every route: wrong types, sizes, encodings, unicode, huge
 * arrays, deep JSON, wrong methods. No answer may be a 5xx, every error must carry the
 * contract's error body, and the server must still serve afterwards.
 */

const CASES_PER_ROUTE = Math.ceil(2400 / ROUTES.length);

/** mulberry32: the same cases on every run, so a failure can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STRINGS = [
  '',
  ' ',
  'a'.repeat(70_000),
  '\u0000',
  '\ud800',
  '💥'.repeat(100),
  '../../etc/passwd',
  '%00',
  'javascript:alert(1)',
  'file:///etc/passwd',
  '<script>',
  'null',
  '-1',
  '1e309',
  'sk_' + 'x'.repeat(40),
];
const NUMBERS = [0, -1, 1.5, -0, 1e308, -1e308, 2 ** 53 + 1, 65_536, 99_999_999];
const FIELDS = [
  'x',
  'y',
  'text',
  'keys',
  'key',
  'url',
  'type',
  'action',
  'actions',
  'command',
  'kind',
  'display',
  'input',
  'model',
  'instruction',
  'message',
  'messages',
  'tools',
  'ms',
  'width',
  'height',
  'timeout_seconds',
  'tab_id',
  'previous_response_id',
  'max_steps',
];

/** The strings an item of a huge array may be. */
const SHORT_STRINGS = STRINGS.filter((text) => text.length < 1000);

/** `short`: no 70 KB string anywhere in it. */
function value(random: () => number, depth = 0, short = false): unknown {
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
  switch (Math.floor(random() * (depth > 3 ? 4 : 7))) {
    case 0:
      return pick(short ? SHORT_STRINGS : STRINGS);
    case 1:
      return pick(NUMBERS);
    case 2:
      return pick([true, false, null]);
    case 3:
      return pick(['click', 'type', 'navigate', 'keypress', 'browser', 'desktop', 'message']);
    case 4: {
      // One huge array per body at most: 10,001 items at the top, small ones below. The items
      // of a huge one are short: with a 70 KB string in one item of a hundred, the body would
      // pass the 10 MiB limit (20 MB, sent and discarded in half a second), and the array would
      // never reach a route's own checks.
      const length = pick(depth === 0 ? [0, 1, 3, 10_001] : [0, 1, 3]);
      return Array.from({ length }, () => value(random, depth + 1, short || length > 3));
    }
    default: {
      const object: Record<string, unknown> = {};
      const count = Math.floor(random() * 5);
      for (let i = 0; i < count; i++) object[pick(FIELDS)] = value(random, depth + 1, short);
      return object;
    }
  }
}

/** `unframed`: a body sent without Content-Length on a GET, which HTTP cannot delimit. */
type Shape = { method: string; body?: string | Buffer; contentType?: string; unframed?: boolean };

function shape(random: () => number, method: string): Shape {
  switch (Math.floor(random() * 10)) {
    case 0:
      return { method, body: '{"x": 1,', contentType: 'application/json' };
    case 1:
      return { method, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]) };
    case 2:
      return {
        method,
        body: `${'['.repeat(5000)}${']'.repeat(5000)}`,
        contentType: 'application/json',
      };
    case 3:
      return { method, body: 'x=1&y=2', contentType: 'application/x-www-form-urlencoded' };
    case 4:
      return { method: ['PUT', 'PATCH', 'DELETE', 'GET', 'POST'][Math.floor(random() * 5)]! };
    case 5:
      return { method: 'GET', body: '{"x":1}', contentType: 'application/json', unframed: true };
    default:
      return { method, body: JSON.stringify(value(random)), contentType: 'application/json' };
  }
}

function send(
  url: string,
  key: string,
  request: Shape,
): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (request.contentType) headers['content-type'] = request.contentType;
    if (request.body !== undefined && !request.unframed) {
      headers['content-length'] = String(Buffer.byteLength(request.body));
    }
    const req = httpRequest(url, { method: request.method, headers }, (res) => {
      // Streams (events, screencast) answer 200 and stay open: their status is what counts.
      if (res.statusCode === 200 && /event-stream|ndjson/.test(res.headers['content-type'] ?? '')) {
        res.destroy();
        return resolve({ status: 200, type: String(res.headers['content-type']), text: '' });
      }
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode!, type: String(res.headers['content-type'] ?? ''), text }),
      );
    });
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer to ${request.method} ${url}`)));
    req.end(request.body);
  });
}

/** A generated value in a URL; a lone surrogate becomes percent-encoded bytes that are not UTF-8. */
function pathPart(value: unknown): string {
  try {
    return encodeURIComponent(String(value));
  } catch {
    return '%ED%A0%80%FF';
  }
}

let server: TestServer;
let computer: string;

beforeAll(async () => {
  // Exec off: a generated body must never run a command on this machine.
  server = await startTestServer({ exec: { enabled: false }, limits: { browsers_per_org: 3 } });
  computer = (await server.request('POST', '/computers', {})).body.id as string;
});
afterAll(() => server.close());

describe('fuzz: every route, generated malformed requests', () => {
  it(`answers ${CASES_PER_ROUTE * ROUTES.length} requests without a 5xx and keeps serving`, async () => {
    const random = prng(20261122);
    const tally = { total: 0, byStatus: new Map<number, number>() };
    for (const route of ROUTES) {
      const [method, template] = route.split(' ') as [string, string];
      for (let i = 0; i < CASES_PER_ROUTE; i++) {
        const id = random() < 0.8 ? computer : pathPart(value(random));
        const path = template
          .replace(':id', id)
          .replace(':tab_id', 'tab_x')
          .replace(':computer', computer)
          .replace(':file', pathPart(value(random)));
        const request = shape(random, method);
        const query = random() < 0.2 ? `?fps=${pathPart(value(random))}` : '';
        const answer = await send(`${server.url}${path}${query}`, server.key, request);
        tally.total++;
        if (route === 'DELETE /computers/:id' && id === computer && answer.status === 204) {
          // Keep a live computer for the routes after this one.
          computer = (await server.request('POST', '/computers', {})).body.id as string;
        }
        tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1);
        const context = `${request.method} ${path}${query} ${String(request.body).slice(0, 200)} → ${answer.status} ${answer.text.slice(0, 300)}`;
        expect(answer.status, context).toBeLessThan(500);
        if (answer.status >= 400) {
          expect(answer.type, context).toMatch(/^application\/json/);
          const body = JSON.parse(answer.text) as Record<string, unknown>;
          expect(typeof body.message, context).toBe('string');
          expect(typeof body.code, context).toBe('string');
          expect(typeof body.request_id, context).toBe('string');
        }
      }
    }
    expect(tally.total).toBeGreaterThanOrEqual(2000);
    console.log(
      `fuzz: ${tally.total} requests; statuses ${JSON.stringify(Object.fromEntries(tally.byStatus))}`,
    );
    expect((await server.request('GET', '/health')).status).toBe(200);
    const status = await server.request('GET', `/computers/${computer}/status`);
    expect(status.status).toBe(200);
  }, 300_000);
});
