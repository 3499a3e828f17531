import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import sharp from 'sharp';
import { afterEach, describe, expect, it } from 'vitest';
import { benchtopEnv, BIN, onBanner, serveProcess } from '../helpers/benchtop-process.js';
import { commandOf, descendants, isAlive } from '../helpers/processes.js';
import { eventually } from '../helpers/test-server.js';

/** `benchtop mcp` as an MCP client starts it: the built CLI, spoken to over stdio. */

const running: ChildProcess[] = [];

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

function stdioClient(env: Record<string, string>) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    env: benchtopEnv(env),
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const client = new Client({ name: 'benchtop-stdio-test', version: '1.0.0' });
  return { client, transport, stderr };
}

const textOf = (result: CallToolResult) =>
  result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  expect(result.isError, textOf(result)).toBeFalsy();
  return result;
};

describe('benchtop mcp (stdio)', () => {
  it('starts Benchtop in-process, serves the tools, and ends every computer when stdin closes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-mcp-stdio-'));
    const { client, transport, stderr } = stdioClient({
      BENCHTOP_DATA_DIR: dataDir,
      BENCHTOP_PORT: '0',
    });
    // A line on stdout that is not JSON-RPC would be reported here.
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    await client.connect(transport);
    const pid = transport.pid!;
    await call(client, 'create_computer', { display: { width: 800, height: 600 } });
    const shot = await call(client, 'screenshot');
    const image = shot.content.find((part) => part.type === 'image')!;
    const meta = await sharp(Buffer.from(image.data, 'base64')).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(['png', 800, 600]);
    const browsers = descendants(pid).filter((child) => /chrom/i.test(commandOf(child)));
    expect(browsers.length).toBeGreaterThan(0);

    await client.close();
    await eventually(() => !isAlive(pid), 10_000);
    expect(stderr.join('')).toMatch(/stdin closed: closing/);
    for (const child of browsers) expect(isAlive(child), commandOf(child)).toBe(false);
    expect(errors).toEqual([]);

    // It stored no key it could not show: the first `benchtop serve` on the data dir shows one.
    const served = await serveProcess(dataDir);
    running.push(served.child);
    expect(served.firstKey).toMatch(/^sk_/);
    served.child.kill('SIGTERM');
    expect(await served.exited()).toBe(0);
  }, 60_000);

  it('says what to set when no Benchtop runs on the data dir and another program holds its port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = String((taken.address() as AddressInfo).port);
      const mcp = spawn(process.execPath, [BIN, 'mcp'], {
        env: benchtopEnv({
          BENCHTOP_DATA_DIR: mkdtempSync(join(tmpdir(), 'benchtop-mcp-taken-')),
          BENCHTOP_PORT: port,
        }),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      running.push(mcp);
      let said = '';
      mcp.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
      expect(await new Promise((resolve) => mcp.once('exit', resolve))).toBe(2);
      expect(said).toContain(
        `benchtop: no Benchtop runs on this data dir, and its address is taken by another program (listen EADDRINUSE: address already in use 127.0.0.1:${port}); set BENCHTOP_PORT to a free port`,
      );
    } finally {
      taken.close();
    }
  });

  it('relays to the Benchtop already running on the data dir, with a key; without one, or a wrong one, it says how', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'benchtop-mcp-bridge-'));
    const port = String(await freePort());
    const serve = spawn(process.execPath, [BIN, 'serve'], {
      env: benchtopEnv({ BENCHTOP_DATA_DIR: dataDir, BENCHTOP_PORT: port }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running.push(serve);
    const output: string[] = [];
    const { url, key } = await new Promise<{ url: string; key: string }>((resolve) =>
      onBanner(serve, output, (url, windowKey) => resolve({ url, key: windowKey })),
    );

    const keyless = spawn(process.execPath, [BIN, 'mcp'], {
      env: benchtopEnv({ BENCHTOP_DATA_DIR: dataDir, BENCHTOP_PORT: port }),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    running.push(keyless);
    let said = '';
    keyless.stderr!.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const code = await new Promise((resolve) => keyless.once('exit', resolve));
    expect(code).toBe(2);
    expect(said).toMatch(/give an API key in TZAFON_API_KEY.*benchtop keys create/);

    const wrong = stdioClient({
      BENCHTOP_DATA_DIR: dataDir,
      BENCHTOP_PORT: port,
      TZAFON_API_KEY: 'sk_wrong_aaaaaaaaaaaaaaaaaaaa',
    });
    await expect(wrong.client.connect(wrong.transport)).rejects.toThrow(
      /refused the message.*unknown or revoked API key/,
    );
    await wrong.client.close();

    const { client, transport } = stdioClient({
      BENCHTOP_DATA_DIR: dataDir,
      BENCHTOP_PORT: port,
      TZAFON_API_KEY: key,
    });
    await client.connect(transport);
    const created = textOf(await call(client, 'create_computer'));
    const id = /computer (\S+);/.exec(created)![1]!;
    const listed = await fetch(`${url}/computers`, { headers: { authorization: `Bearer ${key}` } });
    expect(((await listed.json()) as Array<{ id: string }>).map((c) => c.id)).toContain(id);
    await client.close();
    // The relay started no computer: the server's own close ends the one created through it.
    serve.kill('SIGTERM');
    expect(await new Promise((resolve) => serve.once('exit', resolve))).toBe(0);
  }, 60_000);
});
