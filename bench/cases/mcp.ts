import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLICK_AT, type Bench } from '../bench.js';
import { interleave, timed } from '../sampling.js';

/**
 * MCP is another transport onto the same core call: what the official SDK client over Streamable
 * HTTP (JSON-RPC, session header, SSE-framed answer) adds to a click against POST /click.
 */
export async function benchMcp({ server, client, url, report }: Bench): Promise<void> {
  const mcp = new Client({ name: 'benchtop-bench', version: '1.0.0' });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${server.key}` } },
    }),
  );
  const tool = async (name: string, args: Record<string, unknown>) => {
    const result = (await mcp.callTool({ name, arguments: args })) as CallToolResult;
    const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join();
    if (result.isError) throw new Error(`${name}: ${text}`);
    return text;
  };
  let id = '';
  try {
    const created = await tool('create_computer', { kind: 'browser' });
    id = /computer (\S+);/.exec(created)![1]!;
    await tool('navigate', { url });
    const [viaMcp, viaRest] = await interleave(20, 200, [
      () => timed(() => tool('click', CLICK_AT)),
      () => client.timed('POST', `/computers/${id}/click`, CLICK_AT, 'action'),
    ]);
    report.timing(
      'click through MCP vs REST',
      { api: viaMcp, raw: viaRest },
      { kind: 'ratio', factor: 1.2 },
      'api = tools/call click with the SDK client over Streamable HTTP, raw = POST /computers/{id}/click; same server, same computer',
    );
  } finally {
    await mcp.close();
    if (id) await client.request('DELETE', `/computers/${id}`);
  }
}
