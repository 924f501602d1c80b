import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient, type DirectFunction } from '../../src/index.js';
import { serveMcp, type McpBridgeHandle, type ServeMcpOptions } from '../../src/mcp/serve-mcp.js';
import { json, startServer } from '../fixtures/http/server.js';

const add: DirectFunction = {
  name: 'add',
  description: 'Adds two numbers',
  inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  outputs: { type: 'object', properties: { sum: { type: 'number' } } },
  handler: ({ a, b }) => ({ sum: (a as number) + (b as number) }),
};

async function startBridge(functions: DirectFunction[], options: ServeMcpOptions = {}) {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const reg = await client.registerFunctions('demo', functions);
  expect(reg.success).toBe(true);
  const handle = await serveMcp(client, { transport: 'http' }, options);
  onTestFinished(() => handle.close());
  return { client, handle };
}

/** The headers a host sends to the bridge: its generated bearer token (docs/design/threat-model.md#mcp-bridge-auth). */
function authOf(handle: McpBridgeHandle): Record<string, string> {
  return { authorization: `Bearer ${handle.token}` };
}

function transportTo(handle: McpBridgeHandle) {
  return new StreamableHTTPClientTransport(new URL(handle.url!), { requestInit: { headers: authOf(handle) } });
}

async function connect(handle: McpBridgeHandle) {
  const mcp = new Client({ name: 'bridge-test', version: '1.0.0' });
  await mcp.connect(transportTo(handle));
  onTestFinished(() => mcp.close());
  return mcp;
}

function rawPost(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      }),
    );
  });
}

describe('serveMcp over streamable HTTP', () => {
  it('binds to 127.0.0.1 on the /mcp path by default', async () => {
    const { handle } = await startBridge([add]);
    expect(handle.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it('lists tools with their UTCP names, descriptions and object schemas', async () => {
    const { handle } = await startBridge([add, { name: 'bare', handler: () => 'x' }]);
    const mcp = await connect(handle);
    const { tools } = await mcp.listTools();
    expect(tools).toEqual([
      {
        name: 'demo.add',
        description: 'Adds two numbers',
        inputSchema: add.inputs,
        outputSchema: add.outputs,
      },
      { name: 'demo.bare', inputSchema: { type: 'object' } },
    ]);
  });

  it('encodes tool names MCP does not accept', async () => {
    const seen: unknown[] = [];
    const { handle } = await startBridge([{ name: 'say hello!', handler: (args) => (seen.push(args), 'hi') }]);
    const mcp = await connect(handle);
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([expect.stringMatching(/^demo\.say_hello__[0-9a-f]{8}$/)]);
    const result = await mcp.callTool({ name: tools[0].name, arguments: { x: 1 } });
    expect(result.content).toEqual([{ type: 'text', text: 'hi' }]);
    expect(seen).toEqual([{ x: 1 }]);
  });

  it('calls a tool and returns text plus structuredContent for object results', async () => {
    const { handle } = await startBridge([add]);
    const mcp = await connect(handle);
    const result = await mcp.callTool({ name: 'demo.add', arguments: { a: 2, b: 3 } });
    expect(result).toEqual({ content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } });
  });

  it('returns JSON text without structuredContent for non-object results', async () => {
    const { handle } = await startBridge([{ name: 'list', handler: () => [1, 'two'] }]);
    const mcp = await connect(handle);
    const result = await mcp.callTool({ name: 'demo.list', arguments: {} });
    expect(result).toEqual({ content: [{ type: 'text', text: '[1,"two"]' }] });
  });

  it('reports a throwing tool as isError with its message', async () => {
    const { handle } = await startBridge([
      {
        name: 'fail',
        handler: () => {
          throw new Error('disk is full');
        },
      },
    ]);
    const mcp = await connect(handle);
    const result = await mcp.callTool({ name: 'demo.fail', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('disk is full') }]);
  });

  it('logs pino style: structured fields reach the logger as (fields, message)', async () => {
    // A pino-like logger: fields first, message second; a console-style call would lose the fields.
    const calls: Array<{ fields: unknown; message: unknown }> = [];
    const pinoLike = { debug: (fields: unknown, message?: unknown) => calls.push({ fields, message }) };
    const { handle } = await startBridge(
      [
        {
          name: 'fail',
          handler: () => {
            throw new Error('disk is full');
          },
        },
      ],
      { logger: pinoLike },
    );
    const mcp = await connect(handle);
    await mcp.callTool({ name: 'demo.fail', arguments: {} });
    const failed = calls.find((c) => c.message === 'MCP bridge: tool call failed');
    expect(failed?.fields).toEqual({ tool: 'demo.fail', error: expect.stringContaining('disk is full') });
  });

  /** One HTTP tool answering `body` as `contentType`, registered, served over MCP HTTP and called by the SDK client. */
  async function callHttpBodyTool(contentType: string, body: Buffer) {
    const api = await startServer((req, res) => {
      if (req.url === '/utcp')
        return json(res, {
          utcp_version: '1.0.1',
          manual_version: '1.0.0',
          tools: [
            {
              name: 'fetch',
              description: 'Fetches a file',
              inputs: { type: 'object', properties: {} },
              tool_call_template: { call_template_type: 'http', url: `${api.url}/file`, http_method: 'GET' },
            },
          ],
        });
      res.writeHead(200, { 'content-type': contentType, 'content-length': body.byteLength });
      res.end(body);
    });
    onTestFinished(() => api.close());
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    expect(
      (await client.registerManual({ name: 'files', call_template_type: 'http', url: `${api.url}/utcp` })).success,
    ).toBe(true);
    const handle = await serveMcp(client, { transport: 'http' });
    onTestFinished(() => handle.close());
    const mcp = await connect(handle);
    return mcp.callTool({ name: 'files.fetch', arguments: {} });
  }

  it('serves an HTTP tool answering image/png as MCP image content', async () => {
    const png = Buffer.from(
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
      'base64',
    );
    const result = await callHttpBodyTool('image/png', png);
    expect(result).toEqual({ content: [{ type: 'image', mimeType: 'image/png', data: png.toString('base64') }] });
  });

  it('serves an HTTP tool answering binary data (application/zip) as an MCP blob resource, byte for byte', async () => {
    const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00, 0x08, 0x00, 0xff, 0xfe, 0x00, 0x01]);
    const result = await callHttpBodyTool('application/zip', zip);
    expect(result).toEqual({
      content: [
        {
          type: 'resource',
          resource: { uri: 'urn:utcp-kit:tool-result', mimeType: 'application/zip', blob: zip.toString('base64') },
        },
      ],
    });
  });

  it('reports invalid arguments as isError naming the problem', async () => {
    const { handle } = await startBridge([add]);
    const mcp = await connect(handle);
    const result = await mcp.callTool({ name: 'demo.add', arguments: { a: 1 } });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0].text).toMatch(/Invalid arguments for demo\.add: b: required/);
  });

  it('answers an unknown tool with an InvalidParams protocol error', async () => {
    const { handle } = await startBridge([add]);
    const mcp = await connect(handle);
    await expect(mcp.callTool({ name: 'demo.nope', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: demo.nope'),
    });
  });

  it('aborts the running tool when the host cancels the request', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let aborted!: (reason: unknown) => void;
    const abortSeen = new Promise<unknown>((r) => (aborted = r));
    const { handle } = await startBridge([
      {
        name: 'wait',
        handler: (_args, { signal }) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener(
              'abort',
              () => {
                aborted(signal.reason);
                reject(signal.reason);
              },
              { once: true },
            );
            started();
          }),
      },
    ]);
    const mcp = await connect(handle);
    const controller = new AbortController();
    const call = mcp.callTool({ name: 'demo.wait', arguments: {} }, undefined, { signal: controller.signal });
    await running;
    controller.abort(new Error('user pressed stop'));
    await expect(call).rejects.toThrow();
    await expect(abortSeen).resolves.toBeDefined();
  });

  it('forwards tool progress as notifications/progress', async () => {
    const { handle } = await startBridge([
      {
        name: 'steps',
        handler: (_args, { onProgress }) => {
          onProgress?.({ progress: 1, total: 2, message: 'first' });
          onProgress?.({ progress: 2, total: 2, message: 'second' });
          return 'done';
        },
      },
    ]);
    const mcp = await connect(handle);
    const progress: unknown[] = [];
    const result = await mcp.callTool({ name: 'demo.steps', arguments: {} }, undefined, {
      onprogress: (p) => progress.push(p),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    expect(progress).toEqual([
      { progress: 1, total: 2, message: 'first' },
      { progress: 2, total: 2, message: 'second' },
    ]);
  });

  it('applies the per-call timeout to tool calls', async () => {
    const { handle } = await startBridge([{ name: 'hang', handler: () => new Promise(() => {}) }], { timeoutMs: 50 });
    const mcp = await connect(handle);
    const result = await mcp.callTool({ name: 'demo.hang', arguments: {} });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0].text).toMatch(/timed out after 50 ms/);
  });

  it('serves only the tools named in filter', async () => {
    const { handle } = await startBridge([add, { name: 'hidden', handler: () => 'secret' }], { filter: ['demo.add'] });
    const mcp = await connect(handle);
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['demo.add']);
    await expect(mcp.callTool({ name: 'demo.hidden', arguments: {} })).rejects.toMatchObject({ code: -32602 });
  });

  it('accepts a predicate filter', async () => {
    const { handle } = await startBridge([add, { name: 'other', handler: () => 1 }], {
      filter: (tool) => tool.name.endsWith('.other'),
    });
    const mcp = await connect(handle);
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['demo.other']);
  });

  it('omits outputSchema when outputSchemas is false', async () => {
    const { handle } = await startBridge([add], { outputSchemas: false });
    const mcp = await connect(handle);
    expect((await mcp.listTools()).tools[0]).not.toHaveProperty('outputSchema');
  });

  it('lists tools registered after the bridge started', async () => {
    const { client, handle } = await startBridge([add]);
    const mcp = await connect(handle);
    await client.registerFunctions('later', [{ name: 'ping', handler: () => 'pong' }]);
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['demo.add', 'later.ping']);
  });

  it('sends tools/list_changed to connected hosts when listChanged is on', async () => {
    const { handle } = await startBridge([add], { listChanged: true });
    const mcp = await connect(handle);
    expect(mcp.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    let received = 0;
    mcp.setNotificationHandler(ToolListChangedNotificationSchema, () => void received++);
    // Server-initiated notifications travel on the host's GET stream, which the SDK client opens
    // asynchronously after initialisation; a ping round trip between attempts gives it time to attach.
    for (let attempt = 0; attempt < 50 && received === 0; attempt++) {
      await handle.notifyToolListChanged();
      await mcp.ping();
    }
    expect(received).toBeGreaterThan(0);
  });

  it('refuses notifyToolListChanged when listChanged is off', async () => {
    const { handle } = await startBridge([add]);
    await expect(handle.notifyToolListChanged()).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
  });

  it('keeps one session per client connection', async () => {
    const { handle } = await startBridge([add]);
    const a = transportTo(handle);
    const b = transportTo(handle);
    const first = new Client({ name: 'a', version: '1' });
    const second = new Client({ name: 'b', version: '1' });
    await first.connect(a);
    await second.connect(b);
    onTestFinished(() => Promise.all([first.close(), second.close()]).then(() => {}));
    expect(a.sessionId).toBeTruthy();
    expect(b.sessionId).toBeTruthy();
    expect(a.sessionId).not.toBe(b.sessionId);
    await a.terminateSession();
    expect((await second.callTool({ name: 'demo.add', arguments: { a: 1, b: 1 } })).structuredContent).toEqual({
      sum: 2,
    });
  });

  it('rejects requests with an unknown session id with 404', async () => {
    const { handle } = await startBridge([add]);
    expect(await rawPost(handle.url!, { ...authOf(handle), 'mcp-session-id': 'not-a-session' })).toBe(404);
  });

  it('rejects a non-loopback Host header (DNS rebinding) with 403', async () => {
    const { handle } = await startBridge([add]);
    expect(await rawPost(handle.url!, { host: 'evil.example:80' })).toBe(403);
  });

  it('rejects a non-loopback Origin with 403', async () => {
    const { handle } = await startBridge([add]);
    expect(await rawPost(handle.url!, { origin: 'http://evil.example' })).toBe(403);
  });

  it('answers other paths with 404', async () => {
    const { handle } = await startBridge([add]);
    expect(await rawPost(handle.url!.replace(/\/mcp$/, '/other'), {})).toBe(404);
  });

  it('serves a custom path', async () => {
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    await client.registerFunctions('demo', [add]);
    const handle = await serveMcp(client, { transport: 'http', path: '/tools/mcp' });
    onTestFinished(() => handle.close());
    expect(handle.url).toMatch(/\/tools\/mcp$/);
    const mcp = await connect(handle);
    expect((await mcp.listTools()).tools).toHaveLength(1);
  });

  it('close aborts running calls, stops listening and can be called twice', async () => {
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let aborted = false;
    const { handle } = await startBridge([
      {
        name: 'wait',
        handler: (_args, { signal }) =>
          new Promise((_resolve, reject) => {
            signal.addEventListener(
              'abort',
              () => {
                aborted = true;
                reject(signal.reason);
              },
              { once: true },
            );
            started();
          }),
      },
    ]);
    const mcp = await connect(handle);
    const call = mcp.callTool({ name: 'demo.wait', arguments: {} });
    call.catch(() => {});
    await running;
    await handle.close();
    await handle.close();
    await handle.closed;
    expect(aborted).toBe(true);
    await expect(rawPost(handle.url!, {})).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

describe('serveMcp round trip through the mcp transport', () => {
  it('lets another UtcpClient call the bridged tools as an MCP manual', async () => {
    const { handle } = await startBridge([
      add,
      {
        name: 'fail',
        handler: () => {
          throw new Error('bridged failure');
        },
      },
    ]);
    const other = await UtcpClient.create({});
    onTestFinished(() => other.close());
    const reg = await other.registerManual({
      name: 'bridged',
      call_template_type: 'mcp',
      config: { mcpServers: { local: { url: handle.url!, transport: 'http', headers: authOf(handle) } } },
    });
    expect(reg.errors).toEqual([]);
    expect((await other.getTools()).map((t) => t.name)).toEqual(['bridged.local.demo.add', 'bridged.local.demo.fail']);
    expect(await other.callTool('bridged.local.demo.add', { a: 20, b: 22 })).toEqual({ sum: 42 });
    await expect(other.callTool('bridged.local.demo.fail', {})).rejects.toThrow('bridged failure');
  });
});
