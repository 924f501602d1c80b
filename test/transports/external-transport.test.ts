/**
 * A transport written outside the package, against the built root entry only (`dist/index.js`, what
 * `import 'utcp-kit'` loads): the contract and the deadline helpers it needs are public
 * (docs/design/adding-a-transport.md#external-deadlines). The call is cancelled by the caller's abort, by the
 * call's deadline and by the transport's own timeout, and every socket it opened is closed each time.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { CallOptions, CallTemplateBase, Transport } from '../../src/index.js';

// The runtime is the built package, not the sources (`npm test` builds first: pretest); only types come from src.
const DIST_ENTRY = new URL('../../dist/index.js', import.meta.url).href;
const { UtcpClient, onAbort, raceSignal, remainingMs, throwIfAborted, withTimeout } = (await import(
  DIST_ENTRY
)) as typeof import('../../src/index.js');

/** A server on 127.0.0.1 that accepts and never answers; it counts the connections still open. */
let server: Server;
let port: number;
const open = new Set<Socket>();

beforeAll(async () => {
  server = createServer((socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  for (const socket of open) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

interface HoldTemplate extends CallTemplateBase {
  call_template_type: 'hold';
  port: number;
  /** The protocol's own timeout. */
  hold_timeout_ms?: number;
}

/** The external transport: one TCP connection per call, waiting for an answer that never comes. */
function holdTransport() {
  const sockets = new Set<Socket>();
  const remaining: (number | undefined)[] = [];
  const transport: Transport<HoldTemplate> = {
    type: 'hold',
    async registerManual(template) {
      return { manual: { tools: [{ name: 'wait', inputs: { type: 'object' }, tool_call_template: template }] } };
    },
    async callTool(tool, _args, template, options: CallOptions) {
      const what = `hold tool ${tool.name}`;
      throwIfAborted(options.signal, what, options.timeoutMs);
      remaining.push(remainingMs(options));
      const scope = withTimeout(options.signal, template.hold_timeout_ms, `${what} (hold_timeout_ms)`);
      const socket = connect({ host: '127.0.0.1', port: template.port });
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      const stopFollowing = onAbort(scope.signal, () => socket.destroy());
      try {
        const answer = new Promise<string>((resolve, reject) => {
          socket.once('data', (data) => resolve(data.toString()));
          socket.once('error', reject);
        });
        return await raceSignal(answer, scope.signal, what, options.timeoutMs);
      } finally {
        stopFollowing();
        scope.dispose();
        socket.destroy();
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
    },
  };
  return { transport, sockets, remaining };
}

async function holdClient(template: Partial<HoldTemplate> = {}) {
  const hold = holdTransport();
  const client = await UtcpClient.create(
    { manual_call_templates: [{ name: 'm', call_template_type: 'hold', port, ...template }] },
    { transports: { hold: () => hold.transport } },
  );
  onTestFinished(() => client.close());
  expect(await client.getTool('m.wait')).toBeDefined();
  return { client, ...hold };
}

/** Resolves once `check()` holds, polled every 10 ms (a bound well inside the test timeout). */
async function until(check: () => boolean, what: string): Promise<void> {
  const giveUp = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > giveUp) throw new Error(`still waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('a transport outside the package (root entry only)', () => {
  it("is cancelled by the caller's abort, and closes its socket", async () => {
    const { client, sockets } = await holdClient();
    const controller = new AbortController();
    const call = client.callTool('m.wait', {}, { signal: controller.signal });
    await until(() => open.size === 1 && sockets.size === 1, 'the call to connect');
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    await until(() => open.size === 0 && sockets.size === 0, 'the socket to close');
  });

  it("is cancelled by the call's deadline, sees the time left, and closes its socket", async () => {
    const { client, sockets, remaining } = await holdClient();
    const call = client.callTool('m.wait', {}, { timeoutMs: 300 });
    await until(() => open.size === 1, 'the call to connect');
    await expect(call).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(remaining).toHaveLength(1);
    expect(remaining[0]).toBeGreaterThan(0);
    expect(remaining[0]).toBeLessThanOrEqual(300);
    await until(() => open.size === 0 && sockets.size === 0, 'the socket to close');
  });

  it('is cancelled by its own protocol timeout (withTimeout), and closes its socket', async () => {
    const { client, sockets, remaining } = await holdClient({ hold_timeout_ms: 200 });
    await expect(client.callTool('m.wait', {})).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: expect.stringContaining('hold_timeout_ms'),
    });
    expect(remaining).toEqual([undefined]);
    await until(() => open.size === 0 && sockets.size === 0, 'the socket to close');
  });

  it('is cancelled when the client closes', async () => {
    const { client, sockets } = await holdClient();
    const call = client.callTool('m.wait', {});
    await until(() => open.size === 1, 'the call to connect');
    await client.close();
    await expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await until(() => open.size === 0 && sockets.size === 0, 'the socket to close');
  });
});
