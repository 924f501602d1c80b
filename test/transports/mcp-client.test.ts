/** The mcp transport end to end through UtcpClient, and the process-exit check after close(). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ToolExecutionError, UtcpClient } from '../../src/index.js';
import { fixtureServer, mcpTemplate, measureExitAfterClose, processAlive } from '../fixtures/mcp/harness.js';

const clients: UtcpClient[] = [];
afterEach(async () => {
  while (clients.length) await clients.pop()!.close();
});

/**
 * These tests tell servers apart by the pid they report and probe it from here, so their servers run without a PID
 * namespace (in one, each is pid 2); test/security/process-namespace.test.ts covers the namespace.
 */
async function newClient(variables: Record<string, string> = {}): Promise<UtcpClient> {
  const client = await UtcpClient.create({ variables }, { pidNamespaces: false });
  clients.push(client);
  return client;
}

type Who = { label: string | null; pid: number; calls: number };

describe('mcp through UtcpClient', () => {
  it('registers an mcp manual and calls <manual>.<server>.<tool>, storing the raw template', async () => {
    const client = await newClient({ demo_TOKEN: 'resolved-token' });
    const result = await client.registerManual(
      mcpTemplate('demo', { fx: fixtureServer([], { env: { FIXTURE_TOKEN: '${TOKEN}' } }) }),
    );
    expect(result.success).toBe(true);
    expect(result.manual.tools.map((t) => t.name)).toContain('demo.fx.echo');
    expect(await client.callTool('demo.fx.echo', { text: 'hi' })).toBe('hi');
    const env = (await client.callTool('demo.fx.env', {})) as Record<string, string>;
    expect(env.FIXTURE_TOKEN).toBe('resolved-token');
    const stored = await client.getTool('demo.fx.echo');
    expect(JSON.stringify(stored)).toContain('${TOKEN}');
    expect(JSON.stringify(stored)).not.toContain('resolved-token');
  });

  it('keeps two manuals with the same server name apart', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('alpha', { srv: fixtureServer(['--label=alpha']) }));
    await client.registerManual(mcpTemplate('beta', { srv: fixtureServer(['--label=beta']) }));
    const a = (await client.callTool('alpha.srv.whoami', {})) as Who;
    const b = (await client.callTool('beta.srv.whoami', {})) as Who;
    expect([a.label, b.label]).toEqual(['alpha', 'beta']);
    expect(a.pid).not.toBe(b.pid);
  });

  it('never shares a session between two clients', async () => {
    const one = await newClient();
    const two = await newClient();
    const t = mcpTemplate('same', { srv: fixtureServer() });
    await one.registerManual(t);
    await two.registerManual(t);
    const a = (await one.callTool('same.srv.whoami', {})) as Who;
    const b = (await two.callTool('same.srv.whoami', {})) as Who;
    expect(a.pid).not.toBe(b.pid);
    await one.close();
    expect(processAlive(a.pid)).toBe(false);
    expect(((await two.callTool('same.srv.whoami', {})) as Who).pid).toBe(b.pid);
  });

  it('throws ToolExecutionError for isError results', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('demo', { fx: fixtureServer() }));
    await expect(client.callTool('demo.fx.fail', {})).rejects.toBeInstanceOf(ToolExecutionError);
  });

  it('passes progress to onProgress and cancels through the call signal', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('demo', { fx: fixtureServer() }));
    const controller = new AbortController();
    const progress: number[] = [];
    const call = client.callTool(
      'demo.fx.wait',
      {},
      {
        signal: controller.signal,
        onProgress: (e) => {
          progress.push(e.progress);
          controller.abort();
        },
      },
    );
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(progress).toEqual([0]);
    expect(await client.callTool('demo.fx.cancellations', {})).toBe(1);
  });

  it('cancels a call when its deadline fires, and the next calls reuse the session', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('demo', { fx: fixtureServer() }));
    for (let round = 1; round <= 2; round++) {
      await expect(client.callTool('demo.fx.slow', { ms: 60_000 }, { timeoutMs: 300 })).rejects.toMatchObject({
        code: 'TIMEOUT',
      });
      await vi.waitFor(async () => expect(await client.callTool('demo.fx.cancellations', {})).toBe(round), {
        timeout: 10_000,
        interval: 20,
      });
      expect(await client.callTool('demo.fx.echo', { text: 'still here' })).toBe('still here');
    }
  });

  it('streams one item', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('demo', { fx: fixtureServer() }));
    const items: unknown[] = [];
    for await (const item of client.callToolStreaming('demo.fx.echo', { text: 'streamed' })) items.push(item);
    expect(items).toEqual(['streamed']);
  });

  it('refreshes the manual when the server reports tools/list_changed', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('demo', { fx: fixtureServer() }));
    expect(await client.getTool('demo.fx.added')).toBeUndefined();
    await client.callTool('demo.fx.add_tool', {});
    await vi.waitFor(async () => expect(await client.getTool('demo.fx.added')).toBeDefined(), {
      timeout: 5000,
      interval: 20,
    });
    expect(await client.callTool('demo.fx.added', {})).toBe('the added tool');
  });

  it('ends the server processes on deregisterManual and close()', async () => {
    const client = await newClient();
    await client.registerManual(mcpTemplate('one', { fx: fixtureServer() }));
    await client.registerManual(mcpTemplate('two', { fx: fixtureServer() }));
    const p1 = ((await client.callTool('one.fx.whoami', {})) as Who).pid;
    const p2 = ((await client.callTool('two.fx.whoami', {})) as Who).pid;
    expect(await client.deregisterManual('one')).toBe(true);
    expect(processAlive(p1)).toBe(false);
    expect(processAlive(p2)).toBe(true);
    await client.close();
    expect(processAlive(p2)).toBe(false);
  });

  it('lets the process exit right after close() (server-everything over stdio)', async () => {
    const run = await measureExitAfterClose();
    expect(run.code, run.stderr).toBe(0);
    expect(run.output).toMatchObject({ echo: 'Echo: bye' });
    // Measured ~30 ms on the development machine; the official SDK takes ~30 s here.
    expect(run.exitMs, `exited ${run.exitMs} ms after close()`).toBeLessThan(5000);
  }, 30_000);
});
