/**
 * One `mcp` manual type for every protocol generation (docs/design/transports.md#mcp-protocol-versions):
 * a v2-SDK server that rejects the legacy handshake (2026-07-28 only), v1-SDK servers
 * (2025-era `initialize`, stdio and streamable HTTP) and a legacy HTTP+SSE server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { McpServerError } from '../../src/transports/mcp/index.js';
import { ToolExecutionError } from '../../src/core/errors.js';
import {
  createHarness,
  EVERYTHING_ENTRY,
  FIXTURE_DIR,
  fixtureServer,
  mcpTemplate,
  toolNames,
  type Harness,
} from '../fixtures/mcp/harness.js';
import { startHttpMcpServer, startSseMcpServer } from '../fixtures/mcp/http-server.js';

const V2_SERVER = join(FIXTURE_DIR, 'v2-server.mjs');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

function harness(): Harness {
  const h = createHarness();
  cleanups.push(() => h.close());
  return h;
}

/** Starts the v2 fixture server over HTTP and returns its /mcp URL. */
async function startV2Http(extra: string[] = []): Promise<string> {
  const child: ChildProcess = spawn(process.execPath, [V2_SERVER, '--http', ...extra], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  );
  return new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.once('exit', (code) => reject(new Error(`v2 server exited with ${code}`)));
  });
}

function versionOf(h: Harness, manual: string): string | undefined {
  return h.transport.sessionInfo().find((s) => s.manual === manual)?.protocolVersion;
}

describe('mcp protocol versions', () => {
  it('uses a v2-SDK server that accepts only 2026-07-28, over streamable HTTP (auto and explicit transport)', async () => {
    const url = await startV2Http();
    const h = harness();
    for (const [name, server] of [
      ['auto', { url }],
      ['explicit', { url, transport: 'http' }],
    ] as const) {
      const t = mcpTemplate(name, { v2: server });
      expect(toolNames(await h.register(t))).toEqual(['v2.echo', 'v2.fail', 'v2.rpc_error']);
      expect(await h.call(t, 'v2.echo', { text: 'hi' })).toBe('v2:hi');
      expect(versionOf(h, name)).toBe('2026-07-28');
    }
  });

  it('uses a v2-SDK server that accepts only 2026-07-28, over stdio', async () => {
    const h = harness();
    const t = mcpTemplate('v2s', { v2: { command: process.execPath, args: [V2_SERVER, '--stdio'] } });
    expect(toolNames(await h.register(t))).toEqual(['v2.echo', 'v2.fail', 'v2.rpc_error']);
    expect(await h.call(t, 'v2.echo', { text: 'pipe' })).toBe('v2:pipe');
    expect(versionOf(h, 'v2s')).toBe('2026-07-28');
  });

  it('uses v1-SDK servers with the 2025 handshake: server-everything and the fixture over stdio, the fixture over streamable HTTP', async () => {
    const h = harness();
    const everything = mcpTemplate('ev', { everything: { command: process.execPath, args: [EVERYTHING_ENTRY] } });
    expect(toolNames(await h.register(everything))).toContain('everything.echo');
    expect(await h.call(everything, 'everything.echo', { message: 'v1' })).toBe('Echo: v1');
    expect(versionOf(h, 'ev')).toMatch(/^2025-/);

    const fixture = mcpTemplate('fx', { fx: fixtureServer() });
    expect(await h.call(fixture, 'fx.echo', { text: 'a' })).toBe('a');
    expect(versionOf(h, 'fx')).toMatch(/^2025-/);

    const web = await startHttpMcpServer();
    cleanups.push(() => web.close());
    const overHttp = mcpTemplate('web', { web: { url: web.url } });
    expect(await h.call(overHttp, 'web.echo', { text: 'b' })).toBe('b');
    expect(versionOf(h, 'web')).toMatch(/^2025-/);
  });

  it('uses a legacy HTTP+SSE server through the same manual type (auto fallback and explicit sse)', async () => {
    const sse = await startSseMcpServer();
    cleanups.push(() => sse.close());
    const h = harness();
    const auto = mcpTemplate('auto', { old: { url: sse.url } });
    expect(await h.call(auto, 'old.echo', { text: 'c' })).toBe('c');
    const explicit = mcpTemplate('explicit', { old: { url: sse.url, transport: 'sse' } });
    expect(await h.call(explicit, 'old.echo', { text: 'd' })).toBe('d');
    expect(versionOf(h, 'explicit')).toMatch(/^202[45]-/);
  });

  it('a JSON-RPC error answering tools/call is a ToolExecutionError carrying the server message and code (v1 and v2 servers)', async () => {
    const url = await startV2Http();
    const h = harness();
    const v1 = mcpTemplate('v1', { fx: fixtureServer() });
    const v1Error = await h.call(v1, 'fx.rpc_error').catch((e: unknown) => e);
    expect(v1Error).toBeInstanceOf(ToolExecutionError);
    expect((v1Error as Error).message).toContain('database connection lost');
    expect((v1Error as ToolExecutionError).details).toMatchObject({
      rpcCode: -32603,
      text: 'database connection lost',
      rpcData: { retryable: true },
    });

    const v2 = mcpTemplate('v2', { v2: { url } });
    const v2Error = await h.call(v2, 'v2.rpc_error').catch((e: unknown) => e);
    expect(v2Error).toBeInstanceOf(ToolExecutionError);
    // (the v2 McpServer turns a thrown error into an isError result)
    expect((v2Error as Error).message).toContain('v2 backend unavailable');

    // isError results stay ToolExecutionError too.
    await expect(h.call(v2, 'v2.fail')).rejects.toThrow(ToolExecutionError);
    await expect(h.call(v2, 'v2.fail')).rejects.toThrow(/the v2 widget is broken/);
  });

  it("an HTTP refusal carries the server's JSON-RPC message and the HTTP status, also after the SSE fallback failed", async () => {
    const refusing: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'Tenant header X-Tenant is required' },
        }),
      );
    });
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => refusing.close(() => resolve())));
    const url = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}/mcp`;
    const h = harness();
    for (const server of [{ url }, { url, transport: 'http' }]) {
      const error = await h.register(mcpTemplate(`m${cleanups.length}`, { srv: server })).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpServerError);
      expect((error as McpServerError).status).toBe(400);
      expect((error as Error).message).toMatch(/HTTP 400: Tenant header X-Tenant is required/);
    }
  });
});
