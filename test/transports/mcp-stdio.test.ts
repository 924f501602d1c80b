import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ToolExecutionError, UtcpError } from '../../src/core/errors.js';
import type { ProgressEvent } from '../../src/core/transport.js';
import { McpServerError } from '../../src/transports/mcp/index.js';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  FIXTURE_DIR,
  createHarness,
  fixtureServer,
  mcpTemplate,
  processAlive,
  toolNames,
  type Harness,
} from '../fixtures/mcp/harness.js';

let harness: Harness;
afterEach(async () => {
  await harness?.close();
});

/**
 * These tests identify servers by the pid they report and probe it from here, so they run without a PID namespace
 * (where every server is pid 2 of its own); test/security/process-namespace.test.ts covers the namespace.
 */
function start(overrides: Parameters<typeof createHarness>[0] = {}): Harness {
  harness = createHarness({ pidNamespaces: false, ...overrides });
  return harness;
}

async function whoami(
  h: Harness,
  template: ReturnType<typeof mcpTemplate>,
  server = 'fx',
): Promise<{ label: string | null; pid: number; calls: number }> {
  return (await h.call(template, `${server}.whoami`)) as { label: string | null; pid: number; calls: number };
}

describe('mcp over stdio (fixture server)', () => {
  it('discovers tools as <server>.<tool> carrying the raw template and outputSchema ?? {}', async () => {
    const h = start();
    const raw = mcpTemplate('m', { fx: fixtureServer([], { env: { TOKEN: '${TOKEN}' } }) });
    const substituted = mcpTemplate('m', { fx: fixtureServer([], { env: { TOKEN: 'resolved-secret' } }) });
    const result = await h.transport.registerManual(substituted, {
      signal: new AbortController().signal,
      manualName: 'm',
      rawTemplate: raw,
    });
    const tools = (result.manual as { tools: Array<Record<string, unknown>> }).tools;
    expect(tools.map((t) => t.name)).toContain('fx.echo');
    const echo = tools.find((t) => t.name === 'fx.echo')!;
    expect(echo.outputs).toEqual({});
    expect(echo.inputs).toMatchObject({ properties: { text: { type: 'string' } } });
    expect(echo.tool_call_template).toBe(raw);
    expect(JSON.stringify(tools)).not.toContain('resolved-secret');
    expect(tools.find((t) => t.name === 'fx.structured')!.outputs).toMatchObject({
      properties: { result: { type: 'number' } },
    });
  });

  it('reuses one session (one process) across calls', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    await h.register(t);
    const first = await whoami(h, t);
    const second = await whoami(h, t);
    expect(second.pid).toBe(first.pid);
    expect(second.calls).toBe(first.calls + 1);
  });

  it('shares one starting session between concurrent first calls', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const results = await Promise.all([1, 2, 3, 4].map(() => whoami(h, t)));
    expect(new Set(results.map((r) => r.pid)).size).toBe(1);
    expect(results.map((r) => r.calls).sort()).toEqual([1, 2, 3, 4]);
  });

  it('leaves the session usable when a call is aborted while the server starts', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const controller = new AbortController();
    const early = whoami(h, t);
    const aborted = h.call(t, 'fx.whoami', {}, { signal: controller.signal });
    controller.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' });
    const first = await early;
    expect((await whoami(h, t)).pid).toBe(first.pid);
  });

  it('keeps two manuals with the same server name in separate sessions', async () => {
    const h = start();
    const a = mcpTemplate('a', { fx: fixtureServer(['--label=A']) });
    const b = mcpTemplate('b', { fx: fixtureServer(['--label=B']) });
    await Promise.all([h.register(a), h.register(b)]);
    const [wa, wb] = await Promise.all([whoami(h, a), whoami(h, b)]);
    expect(wa.label).toBe('A');
    expect(wb.label).toBe('B');
    expect(wa.pid).not.toBe(wb.pid);
  });

  it('maps JSON text, numbers, plain text and other items', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    expect(await h.call(t, 'fx.multi')).toEqual([
      { a: 1 },
      12.5,
      'plain words',
      { type: 'image', data: 'AAAA', mimeType: 'image/png' },
    ]);
    expect(await h.call(t, 'fx.echo', { text: 'hello' })).toBe('hello');
  });

  it('unwraps structuredContent {result} and keeps richer objects', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    await h.register(t);
    expect(await h.call(t, 'fx.structured')).toBe(42);
    expect(await h.call(t, 'fx.structured_object')).toEqual({ result: 1, unit: 'kg' });
  });

  it('throws ToolExecutionError carrying the server text for isError results', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const error = await h.call(t, 'fx.fail').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolExecutionError);
    expect((error as Error).message).toContain('the widget is broken\ntry again later');
  });

  it('resolves a bare tool name by searching servers in config order', async () => {
    const h = start();
    const t = mcpTemplate('m', { first: fixtureServer(['--label=first']), second: fixtureServer(['--label=second']) });
    await h.register(t);
    expect(await h.call(t, 'whoami')).toMatchObject({ label: 'first' });
    await expect(h.call(t, 'no_such_tool')).rejects.toMatchObject({
      code: 'TOOL_NOT_FOUND',
      message: "Tool 'no_such_tool' not found in any configured server",
    });
  });

  it('calls tools whose own name contains a dot', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const result = await h.register(t);
    expect(toolNames(result)).toContain('fx.dotted.name');
    expect(await h.call(t, 'fx.dotted.name')).toBe('dotted ok');
  });

  it('exposes resources as tools and reads them', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() }, { register_resources_as_tools: true });
    const result = await h.register(t);
    const tools = (result.manual as { tools: Array<Record<string, unknown>> }).tools;
    const greeting = tools.find((x) => x.name === 'fx.resource_greeting');
    expect(greeting).toMatchObject({
      description: 'Read resource: A greeting. URI: fixture://greeting',
      inputs: { type: 'object', properties: {}, required: [] },
      outputs: { type: 'object', properties: { contents: { type: 'array' } } },
    });
    expect(tools.find((x) => x.name === 'fx.resource_config')?.description).toBe(
      'Read resource: config. URI: fixture://config',
    );
    expect(await h.call(t, 'fx.resource_greeting')).toEqual({
      contents: [{ uri: 'fixture://greeting', mimeType: 'text/plain', text: 'hello from a resource' }],
    });
    await expect(h.call(t, 'fx.resource_nope')).rejects.toMatchObject({
      code: 'TOOL_NOT_FOUND',
      message: "Resource 'nope' not found in any configured server",
    });
  });

  it('does not list resources unless register_resources_as_tools is set', async () => {
    const h = start();
    const result = await h.register(mcpTemplate('m', { fx: fixtureServer() }));
    expect(toolNames(result).some((n) => n.includes('resource_'))).toBe(false);
  });

  it.each([
    ['in its own PID namespace', true],
    ['without one', false],
  ])('gives the child only the allowlisted environment plus the server env (%s)', async (_, pidNamespaces) => {
    const h = start({ pidNamespaces });
    process.env.UTCP_TEST_SECRET = 'host-secret-value';
    onTestFinished(() => {
      delete process.env.UTCP_TEST_SECRET;
    });
    const t = mcpTemplate('m', { fx: fixtureServer([], { env: { GIVEN_VAR: 'given' } }) });
    const env = (await h.call(t, 'fx.env')) as Record<string, string>;
    expect(env.UTCP_TEST_SECRET).toBeUndefined();
    expect(env.GIVEN_VAR).toBe('given');
    expect(env.PATH).toBe(process.env.PATH);
    const allowed = new Set([
      'PATH',
      'HOME',
      'LANG',
      'LC_ALL',
      'LC_CTYPE',
      'USER',
      'LOGNAME',
      'SHELL',
      'TZ',
      'TERM',
      'GIVEN_VAR',
    ]);
    // Node itself may add a few variables of its own at startup; none may come from the host.
    const leaked = Object.keys(env).filter((k) => !allowed.has(k) && process.env[k] !== undefined);
    expect(leaked).toEqual([]);
  });

  it('runs the server in cwd relative to the root dir', async () => {
    const root = join(FIXTURE_DIR, '..');
    const h = start({ rootDir: root });
    const t = mcpTemplate('m', { fx: fixtureServer([], { cwd: 'mcp' }) });
    expect(await h.call(t, 'fx.cwd')).toBe(FIXTURE_DIR);
    const defaulted = mcpTemplate('d', { fx: fixtureServer() });
    expect(await h.call(defaulted, 'fx.cwd')).toBe(root);
  });

  it('reports progress and cancels a running call, and the server sees the cancellation', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const controller = new AbortController();
    const events: ProgressEvent[] = [];
    const call = h.call(
      t,
      'fx.wait',
      {},
      {
        signal: controller.signal,
        onProgress: (e) => {
          events.push(e);
          controller.abort();
        },
      },
    );
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(events[0]).toEqual({ progress: 0, total: 1, message: 'started' });
    expect(await h.call(t, 'fx.cancellations')).toBe(1);
  });

  it('times out after the server timeout (seconds) and cancels the request', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer([], { timeout: 0.3 }) });
    await h.register(t);
    const started = Date.now();
    await expect(h.call(t, 'fx.wait')).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(await h.call(t, 'fx.cancellations')).toBe(1);
  });

  it('keeps a call alive past the server timeout while the server reports progress', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer([], { timeout: 0.4 }) });
    await h.register(t);
    // No deadline of its own, then one longer than the server timeout: both ask for progress and outlive 0.4 s.
    expect(await h.call(t, 'fx.slow', { ms: 1500, every: 100 })).toMatch(/^done after \d+ progress reports$/);
    expect(await h.call(t, 'fx.slow', { ms: 1500, every: 100 }, { timeoutMs: 60_000 })).toMatch(/^done after/);
    // A server that reports nothing still hits the server timeout.
    await expect(h.call(t, 'fx.slow', { ms: 1500, every: 1e9 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('asks for progress only when the caller listens or the call may outlive the server timeout', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer([], { timeout: 10 }) });
    await h.register(t);
    const asked = async (options: Parameters<Harness['call']>[3]) =>
      ((await h.call(t, 'fx.progress_token', {}, options)) as { asked: boolean }).asked;
    expect(await asked({})).toBe(true);
    expect(await asked({ timeoutMs: 60_000 })).toBe(true);
    expect(await asked({ timeoutMs: 5_000 })).toBe(false);
    expect(await asked({ timeoutMs: 10_000 })).toBe(false);
    expect(await asked({ timeoutMs: 5_000, onProgress: () => {} })).toBe(true);
  });

  it('cancels aborted calls one by one and keeps the session usable after each', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    await h.register(t);
    for (let round = 1; round <= 3; round++) {
      const controller = new AbortController();
      const call = h.call(t, 'fx.slow', { ms: 60_000 }, { signal: controller.signal });
      controller.abort();
      await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
      await vi.waitFor(async () => expect(await h.call(t, 'fx.cancellations')).toBe(round), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await h.call(t, 'fx.echo', { text: `after ${round}` })).toBe(`after ${round}`);
    }
  });

  it('re-initialises a server that exited after a call, on the next call', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const before = await whoami(h, t);
    expect(await h.call(t, 'fx.crash_after_reply')).toBe('goodbye');
    const after = await whoami(h, t);
    expect(after.pid).not.toBe(before.pid);
    expect(after.calls).toBe(1);
    expect(processAlive(before.pid)).toBe(false);
  });

  it('re-initialises a server that stopped reading its stdin (the write fails with EPIPE) and retries the call', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer(['--stop-reading-after-reply']) });
    const before = await whoami(h, t);
    expect(await h.call(t, 'fx.crash_after_reply')).toBe('goodbye');
    const after = await whoami(h, t);
    expect(after.pid).not.toBe(before.pid);
    expect(after.calls).toBe(1);
  });

  it('retries once when the server dies during a call, then reports its exit code and stderr tail', async () => {
    const h = start();
    const log = join(mkdtempSync(join(tmpdir(), 'utcp-mcp-')), 'starts.log');
    onTestFinished(() => rmSync(dirname(log), { recursive: true, force: true }));
    const t = mcpTemplate('m', { fx: fixtureServer([], { env: { FIXTURE_START_LOG: log } }) });
    const first = await whoami(h, t);
    const error = await h.call(t, 'fx.die').catch((e: unknown) => e);
    // The first process died during the call, the retry started a second one, which died too.
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(2);
    expect(error).toBeInstanceOf(McpServerError);
    expect((error as Error).message).toContain('exited with code 3');
    expect((error as McpServerError).stderrTail).toContain('fatal: the die tool was called on purpose');
    expect((error as Error).message).toContain('fatal: the die tool was called on purpose');
    // The retry ran on a fresh process; the session recovers again afterwards.
    const later = await whoami(h, t);
    expect(later.pid).not.toBe(first.pid);
    expect(later.calls).toBe(1);
  });

  it('includes the stderr tail when a server fails to start', async () => {
    const h = start();
    const error = await h
      .register(mcpTemplate('m', { fx: fixtureServer(['--crash-on-start']) }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpError);
    expect((error as Error).message).toMatch(/failed to start.*exited with code 2/);
    expect((error as Error).message).toContain('config file /nowhere/missing.toml not found');
  });

  it('keeps the working servers when one server fails, with a warning', async () => {
    const h = start();
    const t = mcpTemplate('m', {
      good: fixtureServer(),
      broken: fixtureServer(['--crash-on-start']),
      missing: { command: '/nonexistent/mcp-server-binary' },
      'bad.name': fixtureServer(),
    });
    const result = await h.register(t);
    expect(toolNames(result)).toContain('good.echo');
    expect(toolNames(result).some((n) => !n.startsWith('good.'))).toBe(false);
    const warnings = result.warnings!.join('\n');
    expect(warnings).toContain("MCP server 'broken' failed");
    expect(warnings).toMatch(/MCP server 'missing' failed: .*could not be started \(ENOENT\)/);
    expect(warnings).toContain("MCP server 'bad.name' failed");
    expect(h.transport.sessionInfo().map((s) => s.server)).toEqual(['good']);
  });

  it('fails the manual when every server fails', async () => {
    const h = start();
    const t = mcpTemplate('m', { a: { command: '/nonexistent/one' }, b: { command: '/nonexistent/two' } });
    await expect(h.register(t)).rejects.toThrow(
      /Every MCP server of manual m failed: MCP server 'a' failed.*MCP server 'b' failed/,
    );
  });

  it('stops paging after limits.max_list_pages when the server never stops', async () => {
    const h = start();
    h.ctx.limits.max_list_pages = 5;
    const result = await h.register(mcpTemplate('m', { fx: fixtureServer(['--paginate=forever']) }));
    expect(toolNames(result)).toEqual(['fx.page0', 'fx.page1', 'fx.page2', 'fx.page3', 'fx.page4']);
    expect(result.warnings!.join('\n')).toContain('still had more pages after 5');
  });

  it('stops paging on a repeated cursor', async () => {
    const h = start();
    const result = await h.register(mcpTemplate('m', { fx: fixtureServer(['--paginate=repeat']) }));
    expect(toolNames(result)).toEqual(['fx.page0', 'fx.page1']);
    expect(result.warnings!.join('\n')).toContain('repeated a pagination cursor');
  });

  it('follows nextCursor through every page', async () => {
    const h = start();
    const result = await h.register(mcpTemplate('m', { fx: fixtureServer(['--paginate=pages']) }));
    expect(toolNames(result)).toHaveLength(17);
    expect(result.warnings).toEqual([]);
  });

  it('asks the client to refresh the manual on tools/list_changed', async () => {
    const refreshed: string[] = [];
    let notify!: () => void;
    const requested = new Promise<void>((resolve) => (notify = resolve));
    const h = start({
      requestRefresh: (name) => {
        refreshed.push(name);
        notify();
      },
    });
    const t = mcpTemplate('m', { fx: fixtureServer() });
    await h.register(t);
    await h.call(t, 'fx.add_tool');
    await requested;
    expect(refreshed).toEqual(['m']);
    expect(toolNames(await h.register(t))).toContain('fx.added');
  });

  it('ends the child process on deregisterManual and on close', async () => {
    const h = start();
    const a = mcpTemplate('a', { fx: fixtureServer() });
    const b = mcpTemplate('b', { fx: fixtureServer() });
    const pa = (await whoami(h, a)).pid;
    const pb = (await whoami(h, b)).pid;
    await h.transport.deregisterManual(a, { manualName: 'a' });
    expect(processAlive(pa)).toBe(false);
    expect(processAlive(pb)).toBe(true);
    await h.transport.close();
    expect(processAlive(pb)).toBe(false);
    await h.transport.close();
    await expect(h.call(b, 'fx.whoami')).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it('starts a new session when the server config changes', async () => {
    const h = start();
    const first = await whoami(h, mcpTemplate('m', { fx: fixtureServer(['--label=one']) }));
    const second = await whoami(h, mcpTemplate('m', { fx: fixtureServer(['--label=two']) }));
    expect(second.label).toBe('two');
    expect(second.pid).not.toBe(first.pid);
    await h.transport.close();
    expect(processAlive(first.pid)).toBe(false);
  });

  it('streams exactly one item equal to the call result', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    const tool = { name: 'm.fx.echo', description: '', inputs: {}, outputs: {}, tags: [], tool_call_template: t };
    const items: unknown[] = [];
    for await (const item of h.transport.callToolStream(tool, { text: 'once' }, t, {
      signal: new AbortController().signal,
      manualName: 'm',
      rawTemplate: t,
    }))
      items.push(item);
    expect(items).toEqual(['once']);
  });
});
