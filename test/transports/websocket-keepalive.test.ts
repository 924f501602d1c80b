import { once } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { WebSocketCallTemplate } from '../../src/index.js';
import { createWebSocketTransport } from '../../src/transports/websocket/index.js';
import { KEEP_ALIVE_INTERVAL_MS } from '../../src/transports/websocket/ws-connection.js';
import { createTestContext } from '../helpers/context.js';
import { callOptions, toolOf } from '../fixtures/sockets/call-helpers.js';
import { answerEach, startWsServer } from '../fixtures/sockets/ws-server.js';

// Only the keep-alive interval is faked; sockets and call deadlines run on real time.
beforeEach(() => void vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] }));
afterEach(() => void vi.useRealTimers());

async function setup(extra: Partial<WebSocketCallTemplate> = {}, autoPong = true) {
  const server = await startWsServer((peer) => answerEach(peer, (m) => m), { autoPong });
  const transport = createWebSocketTransport(createTestContext());
  onTestFinished(async () => {
    await transport.close();
    await server.close();
  });
  const template: WebSocketCallTemplate = {
    call_template_type: 'websocket',
    url: `${server.url}/ws`,
    timeout: 5,
    ...extra,
  };
  const call = (args = {}) => transport.callTool(toolOf('echo', template), args, template, callOptions(template));
  return { server, transport, call };
}

describe('websocket keep-alive', () => {
  it('pings a pooled connection every 30 s', async () => {
    const { server, call } = await setup();
    await call();
    const peer = server.peers[0];
    const ping = once(peer.ws, 'ping');
    vi.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS);
    await ping;
    expect(KEEP_ALIVE_INTERVAL_MS).toBe(30_000);
  });

  it('drops a connection whose peer stopped answering pings, then reconnects on the next call', async () => {
    const { server, call } = await setup({}, false);
    await call();
    const peer = server.peers[0];
    const ping = once(peer.ws, 'ping');
    vi.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS);
    await ping;
    vi.advanceTimersByTime(KEEP_ALIVE_INTERVAL_MS); // no pong arrived since the last ping
    await peer.closed;
    expect(await call({ again: true })).toEqual({ again: true });
    expect(server.peers).toHaveLength(2);
  });

  it('does not ping when keep_alive is false', async () => {
    const { call } = await setup({ keep_alive: false });
    await call();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('does not ping per-call connections', async () => {
    const server = await startWsServer();
    const transport = createWebSocketTransport(createTestContext());
    onTestFinished(async () => {
      await transport.close();
      await server.close();
    });
    const template: WebSocketCallTemplate = {
      call_template_type: 'websocket',
      url: `${server.url}/ws`,
      header_fields: ['x-user'],
    };
    const pending = transport.callTool(toolOf('echo', template), { 'x-user': 'a' }, template, callOptions(template));
    const peer = await server.peer(0);
    await peer.message(0);
    expect(vi.getTimerCount()).toBe(0); // checked while the per-call connection is open
    peer.ws.send('"done"');
    expect(await pending).toBe('done');
  });

  it('clears the ping timer on close()', async () => {
    const { transport, call } = await setup();
    await call();
    expect(vi.getTimerCount()).toBe(1);
    await transport.close();
    expect(vi.getTimerCount()).toBe(0);
  });
});
