/**
 * Threat model (docs/design/threat-model.md#stream-idle): an SSE server that sends only heartbeats cannot hold
 * a call forever. The idle timeout (`limits.stream_idle_timeout_ms`) and the call deadline both end it with
 * UtcpTimeoutError, and the connection is released. Through the public API, against a real local server.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient, UtcpTimeoutError } from './packed.js';

let server: Server;
let port: number;
const open = new Set<ServerResponse>();

beforeAll(async () => {
  server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    open.add(res);
    const beat = setInterval(() => res.write(': heartbeat\n\n'), 20);
    res.on('close', () => {
      clearInterval(beat);
      open.delete(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function client(limits: Record<string, number> = {}) {
  const c = await UtcpClient.create({ limits }, {});
  const tools = [
    {
      name: 'feed',
      description: '',
      inputs: { type: 'object', properties: {} },
      tool_call_template: { call_template_type: 'sse', url: `http://127.0.0.1:${port}/feed` },
    },
  ];
  const r = await c.registerManual({
    name: 's',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: ['sse'],
  });
  expect(r.errors).toEqual([]);
  return c;
}

async function connectionsDrop() {
  for (let i = 0; i < 200 && open.size > 0; i++) await new Promise((r) => setTimeout(r, 10));
  return open.size;
}

describe('sse: a stream of heartbeats only', () => {
  it('callTool ends with UtcpTimeoutError after limits.stream_idle_timeout_ms', async () => {
    const c = await client({ stream_idle_timeout_ms: 300 });
    const error = await c.callTool('s.feed', {}).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect((error as Error).message).toContain('stream_idle_timeout_ms');
    expect(await connectionsDrop()).toBe(0);
    await c.close();
  });

  it("a limit past Node's timer range means no idle timeout (not a timer that fires at once with a warning)", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const c = await client({ stream_idle_timeout_ms: 2 ** 31 });
      const error = await c.callTool('s.feed', {}, { timeoutMs: 400 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UtcpTimeoutError);
      expect((error as Error).message).not.toContain('stream_idle_timeout_ms'); // the call deadline ended it
      await c.close();
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('callToolStreaming ends the same way', async () => {
    const c = await client({ stream_idle_timeout_ms: 300 });
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of c.callToolStreaming('s.feed', {})) items.push(item);
    })().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(items).toEqual([]);
    await c.close();
  });

  it('the call deadline applies when it is shorter than the idle timeout', async () => {
    const c = await client();
    const error = await c.callTool('s.feed', {}, { timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(error).toMatchObject({ timeoutMs: 300 });
    expect(await connectionsDrop()).toBe(0);
    await c.close();
  });
});
