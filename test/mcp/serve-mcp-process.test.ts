import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/mcp-bridge/serve-bridge.mjs', import.meta.url));
const EXIT_DEADLINE_MS = 10_000;

/** Watches a stream's lines; `waitFor` resolves with the first line (seen before or after) matching a pattern. */
function watchLines(stream: NodeJS.ReadableStream) {
  const seen: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  createInterface({ input: stream }).on('line', (line) => {
    seen.push(line);
    for (const w of [...waiters]) {
      if (w.pattern.test(line)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  });
  return {
    waitFor(pattern: RegExp): Promise<string> {
      const hit = seen.find((l) => pattern.test(l));
      return hit !== undefined ? Promise.resolve(hit) : new Promise((resolve) => waiters.push({ pattern, resolve }));
    },
  };
}

function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`child did not exit within ${EXIT_DEADLINE_MS} ms`)),
      EXIT_DEADLINE_MS,
    );
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal });
    });
  });
}

function spawnBridge(mode: 'stdio' | 'http'): ChildProcess {
  const child = spawn(process.execPath, [fixture, mode], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  onTestFinished(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return child;
}

/** The official MCP SDK client on one bridge child; the tests below share it (docs/design/testing.md#shared-setup). */
async function stdioClient() {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [fixture, 'stdio'],
    cwd: repoRoot,
    stderr: 'pipe',
  });
  const mcp = new Client({ name: 'bridge-stdio-test', version: '1.0.0' });
  const stderr = transport.stderr as unknown as NodeJS.ReadableStream;
  const lines = watchLines(stderr);
  await mcp.connect(transport);
  return { mcp, lines };
}

describe('serveMcp over stdio (child process)', () => {
  let shared: Awaited<ReturnType<typeof stdioClient>>;
  beforeAll(async () => {
    shared = await stdioClient();
  });
  afterAll(async () => {
    await shared?.mcp.close();
  });

  it('lists the tools registered with registerFunctions', async () => {
    const { tools } = await shared.mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual(['demo.add', 'demo.fail', 'demo.wait']);
    expect(tools[0]).toMatchObject({
      description: 'Adds two numbers',
      inputSchema: { type: 'object', required: ['a', 'b'] },
    });
  });

  it('calls a tool', async () => {
    const result = await shared.mcp.callTool({ name: 'demo.add', arguments: { a: 40, b: 2 } });
    expect(result).toEqual({ content: [{ type: 'text', text: '{"sum":42}' }], structuredContent: { sum: 42 } });
  });

  it('reports a failing tool as isError', async () => {
    const result = await shared.mcp.callTool({ name: 'demo.fail', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      { type: 'text', text: expect.stringContaining('the fail tool failed on purpose') },
    ]);
  });

  it('aborts the tool in the child when the host cancels', async () => {
    const { mcp, lines } = shared;
    const controller = new AbortController();
    const call = mcp.callTool({ name: 'demo.wait', arguments: {} }, undefined, { signal: controller.signal });
    await lines.waitFor(/^wait:started$/);
    controller.abort();
    await expect(call).rejects.toThrow();
    await lines.waitFor(/^wait:aborted$/);
    // The session outlives the cancelled call.
    expect((await mcp.callTool({ name: 'demo.add', arguments: { a: 1, b: 1 } })).structuredContent).toEqual({ sum: 2 });
  });

  it('exits by itself when the host closes stdin', async () => {
    const child = spawnBridge('stdio');
    const replies = createInterface({ input: child.stdout! });
    const first = once(replies, 'line');
    child.stdin!.write(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })}\n`,
    );
    const [line] = (await first) as [string];
    expect(JSON.parse(line)).toMatchObject({
      id: 1,
      result: { serverInfo: { name: 'utcp-kit' }, capabilities: { tools: {} } },
    });
    child.stdin!.end();
    expect(await exitOf(child)).toEqual({ code: 0, signal: null });
  });
});

describe('serveMcp over HTTP (child process)', () => {
  it('closes its sessions and sockets so the process exits while a host is still connected', async () => {
    const child = spawnBridge('http');
    const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
    const { url, token } = JSON.parse(line) as { url: string; token: string };
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    });
    const mcp = new Client({ name: 'bridge-http-test', version: '1.0.0' });
    await mcp.connect(transport);
    onTestFinished(() => mcp.close());
    expect((await mcp.callTool({ name: 'demo.add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 });
    const lines = watchLines(child.stderr!);
    child.stdin!.end();
    await lines.waitFor(/^bridge:closed$/);
    expect(await exitOf(child)).toEqual({ code: 0, signal: null });
  });
});
