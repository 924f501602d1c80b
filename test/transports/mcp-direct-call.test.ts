/**
 * `tools/call` on a stdio connection of the 2025 era goes around the SDK's request layer
 * (docs/design/transports.md#mcp-direct-calls). These tests run a hand-written server whose answers are scripted
 * (test/fixtures/mcp/scripted-server.mjs) and the SDK fixture server, over real child processes.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ToolExecutionError, UtcpError, UtcpTimeoutError } from '../../src/core/errors.js';
import { McpServerError } from '../../src/transports/mcp/index.js';
import {
  FIXTURE_DIR,
  createHarness,
  fixtureServer,
  mcpTemplate,
  toolNames,
  type Harness,
} from '../fixtures/mcp/harness.js';

const SCRIPTED = join(FIXTURE_DIR, 'scripted-server.mjs');

let harness: Harness | undefined;
let debugLines: string[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function start(): Harness {
  debugLines = [];
  harness = createHarness({ pidNamespaces: false, logger: { debug: (message) => debugLines.push(String(message)) } });
  return harness;
}

/** The scripted server as the manual `m`'s server `s`; `timeout` in seconds. */
function scripted(timeout = 60) {
  return mcpTemplate('m', { s: { command: process.execPath, args: [SCRIPTED], timeout } });
}

describe('direct tools/call over stdio', () => {
  it('sends ids of its own namespace, with a progress token only when the call may outlive the server timeout', async () => {
    const h = start();
    const t = scripted();
    await h.register(t);
    const first = (await h.call(t, 's.request_id')) as { id: unknown; progressToken: unknown };
    expect(first.id).toMatch(/^utcp-kit-\d+$/);
    // No deadline of its own: the token lets a server that reports progress keep the call alive.
    expect(first.progressToken).toBe(first.id);
    const bounded = (await h.call(t, 's.request_id', {}, { timeoutMs: 5000 })) as {
      id: string;
      progressToken: unknown;
    };
    expect(bounded.id).toMatch(/^utcp-kit-\d+$/);
    expect(bounded.id).not.toBe(first.id);
    expect(bounded.progressToken).toBeNull();
  });

  it('gives each of many concurrent calls its own answer when they come back out of order, with a tools/list between', async () => {
    const h = start();
    const t = scripted();
    await h.register(t);
    const pid = h.transport.sessionInfo()[0].pid;
    const calls = Array.from({ length: 12 }, (_, i) =>
      h.call(t, 's.delayed', { text: `call ${i}`, ms: (12 - i) * 10 }),
    );
    // A listing on the same connection goes through the SDK while the calls wait.
    const listing = h.register(t);
    const more = Array.from({ length: 4 }, (_, i) => h.call(t, 's.delayed', { text: `late ${i}`, ms: 0 }));
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 12 }, (_, i) => `call ${i}`));
    expect(await Promise.all(more)).toEqual(['late 0', 'late 1', 'late 2', 'late 3']);
    expect(toolNames(await listing)).toContain('s.delayed');
    expect(h.transport.sessionInfo()[0].pid).toBe(pid);
  });

  it('keeps answering concurrent calls and listings of an SDK server', async () => {
    const h = start();
    const t = mcpTemplate('m', { fx: fixtureServer() });
    await h.register(t);
    const results = await Promise.all([
      ...Array.from({ length: 8 }, (_, i) => h.call(t, 'fx.echo', { text: `e${i}` })),
      h.register(t).then((r) => toolNames(r).includes('fx.echo')),
      h.call(t, 'fx.slow', { ms: 30 }),
    ]);
    expect(results.slice(0, 8)).toEqual(Array.from({ length: 8 }, (_, i) => `e${i}`));
    expect(results[8]).toBe(true);
  });

  it('turns a JSON-RPC error answering the call into a ToolExecutionError with the server words', async () => {
    const h = start();
    const t = scripted();
    await h.register(t);
    const error = await h.call(t, 's.rpc_error').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolExecutionError);
    expect((error as Error).message).toBe('MCP tool s.rpc_error failed: the gadget jammed (JSON-RPC error -32001)');
    expect((error as ToolExecutionError).details).toEqual({
      text: 'the gadget jammed',
      rpcCode: -32001,
      rpcData: { part: 'gear' },
    });
  });

  it('rejects a malformed result with a typed error, raw or mapped, and passes a valid non-text result unchanged', async () => {
    const h = start();
    const t = scripted(2);
    await h.register(t);
    for (const raw of [false, true]) {
      const error = await h.call(t, 's.bad_content', {}, { raw }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(McpServerError);
      expect((error as Error).message).toMatch(/Invalid result for tools\/call: content: /);
    }
    // A result that is not an object fails at once, not when the 2 s server timeout ends.
    const envelope = await h.call(t, 's.bad_response').catch((e: unknown) => e);
    expect(envelope).not.toBeInstanceOf(UtcpTimeoutError);
    expect(envelope).toBeInstanceOf(McpServerError);
    expect((envelope as Error).message).toMatch(/Invalid response for tools\/call/);
    expect(await h.call(t, 's.image', {}, { raw: true })).toEqual({
      content: [{ type: 'image', data: 'aGVsbG8=', mimeType: 'image/png' }],
    });
    // The connection is still good.
    expect(await h.call(t, 's.delayed', { text: 'still here' })).toBe('still here');
  });

  it('rejects arguments JSON cannot express with a typed error and keeps the connection', async () => {
    const h = start();
    const t = scripted();
    await h.register(t);
    const error = await h.call(t, 's.delayed', { n: 1n } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpError);
    expect((error as Error).message).toMatch(/BigInt/);
    expect(await h.call(t, 's.delayed', { text: 'fine' })).toBe('fine');
  });

  it('sends notifications/cancelled with its id on abort, rejects, and drops the late answer', async () => {
    const h = start();
    const t = scripted();
    await h.register(t);
    const controller = new AbortController();
    const pending = h.call(
      t,
      's.hang_then_answer',
      {},
      {
        signal: controller.signal,
        // The server reports progress once it has the request: abort then.
        onProgress: () => controller.abort(new Error('caller gave up')),
      },
    );
    const error = await pending.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpError);
    expect((error as Error).message).toMatch(/caller gave up|abort/i);
    // The server answered the cancelled request at once (a late answer), before it answers this call.
    const cancelled = (await h.call(t, 's.cancellations')) as Array<{ requestId: unknown; reason: string }>;
    expect(cancelled).toHaveLength(1);
    expect(cancelled[0].requestId).toMatch(/^utcp-kit-\d+$/);
    expect(cancelled[0].reason).toContain('caller gave up');
    expect(await h.call(t, 's.delayed', { text: 'next' })).toBe('next');
    // Dropped quietly: the SDK never saw an answer to a request it does not know.
    expect(debugLines.filter((line) => /unknown message id/i.test(line))).toEqual([]);
  });

  it('fails a call at once when the server exits during it, with the exit code and stderr', async () => {
    const h = start();
    const t = scripted(60);
    await h.register(t);
    const error = await h.call(t, 's.exit').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpServerError);
    expect((error as Error).message).toMatch(/exited with code 3/);
    expect((error as McpServerError).stderrTail).toContain('exiting mid-call');
  });

  it('fails a call in flight when the transport closes', async () => {
    const h = start();
    const t = scripted(60);
    await h.register(t);
    const pending = h.call(t, 's.hang_then_answer', {}, { timeoutMs: 30_000 }).catch((e: unknown) => e);
    // The request is on its way once the server reports progress; without a token, give it a call to pass.
    await h.call(t, 's.delayed', { text: 'sync' });
    await h.transport.close();
    expect(await pending).toBeInstanceOf(UtcpError);
  });
});
