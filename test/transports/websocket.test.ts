import { describe, expect, it, onTestFinished } from 'vitest';
import type { Logger } from '../../src/core/logger.js';
import type { WebSocketCallTemplate } from '../../src/index.js';
import { createWebSocketTransport } from '../../src/transports/websocket/index.js';
import { createTestContext } from '../helpers/context.js';
import { callOptions, collect, toolOf } from '../fixtures/sockets/call-helpers.js';
import { answerEach, startWsServer, type WsPeer, type WsServerOptions } from '../fixtures/sockets/ws-server.js';

async function setup(
  onConnection: (peer: WsPeer, index: number) => void,
  extra: Partial<WebSocketCallTemplate> = {},
  opts: { server?: WsServerOptions; limits?: object; logger?: Logger } = {},
) {
  const server = await startWsServer(onConnection, opts.server);
  const ctx = createTestContext({
    limits: { ...createTestContext().limits, ...opts.limits },
    logger: opts.logger ?? {},
  });
  const transport = createWebSocketTransport(ctx);
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
  return { server, transport, template, tool: toolOf('echo', template) };
}

const echoJson = (peer: WsPeer) => answerEach(peer, (m) => JSON.stringify({ got: JSON.parse(m) }));

describe('websocket transport: calls', () => {
  it('sends the arguments as JSON and returns the first reply frame parsed', async () => {
    const { server, transport, template, tool } = await setup(echoJson);
    expect(await transport.callTool(tool, { a: 1, s: 'x' }, template, callOptions(template))).toEqual({
      got: { a: 1, s: 'x' },
    });
    expect(server.peers[0].messages).toEqual(['{"a":1,"s":"x"}']);
    expect(server.peers[0].request.url).toBe('/ws');
  });

  it('sends an object template with typed whole-leaf placeholders', async () => {
    const { server, transport, template, tool } = await setup(echoJson, {
      message: { op: 'add', n: 'UTCP_ARG_n_UTCP_ARG', tags: 'UTCP_ARG_tags_UTCP_ARG' },
    });
    await transport.callTool(tool, { n: 2, tags: ['a'] }, template, callOptions(template));
    expect(JSON.parse(server.peers[0].messages[0])).toEqual({ op: 'add', n: 2, tags: ['a'] });
  });

  it('keeps a JSON-injection payload inside its value with a string template (server-side check)', async () => {
    const payload = '", "isAdmin": true, "x": "';
    const { server, transport, template, tool } = await setup(echoJson, { message: '{"q": "UTCP_ARG_q_UTCP_ARG"}' });
    await transport.callTool(tool, { q: payload }, template, callOptions(template));
    expect(JSON.parse(server.peers[0].messages[0])).toEqual({ q: payload });
  });

  it('unwraps tool_response frames', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => JSON.stringify({ type: 'tool_response', result: { v: 7 } })),
    );
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual({ v: 7 });
  });

  it('throws ToolExecutionError for tool_error frames', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => JSON.stringify({ type: 'tool_error', error: 'bad input' })),
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'ToolExecutionError',
      code: 'TOOL_ERROR',
      message: expect.stringContaining('bad input'),
    });
  });

  it('decodes frames by response_format', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, (m) => (m === '{"bin":true}' ? Buffer.from([1, 2]) : '{"a":1}')),
    );
    const asText = { ...template, response_format: 'text' as const };
    expect(await transport.callTool(tool, {}, asText, callOptions(asText))).toBe('{"a":1}');
    const binary = await transport.callTool(tool, { bin: true }, template, callOptions(template));
    // ws sends Buffers as binary frames: null format → bytes
    expect([...(binary as Uint8Array)]).toEqual([1, 2]);
  });

  it('collects every frame until the server closes in until_close mode', async () => {
    const { transport, template, tool } = await setup(
      (peer) => {
        answerEach(peer, () => {
          peer.ws.send('{"i":1}');
          peer.ws.send('two');
          peer.ws.close();
          return undefined;
        });
      },
      { response_mode: 'until_close' },
    );
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual([{ i: 1 }, 'two']);
  });

  it('fails when the server closes before answering', async () => {
    const { transport, template, tool } = await setup((peer) => answerEach(peer, () => void peer.ws.close(1011)));
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'TransportError',
    });
  });

  it('times out when the server never answers', async () => {
    const { transport, template, tool } = await setup(() => {}, { timeout: 0.15 });
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'UtcpTimeoutError',
      code: 'TIMEOUT',
    });
  });

  it('connects per call to <url minus /tools>/<tool> with path_per_tool', async () => {
    const { server, transport, template } = await setup(echoJson, { url: '', tool_routing: 'path_per_tool' });
    const t = { ...template, url: `${server.url}/api/tools` };
    await transport.callTool(toolOf('search', t), { q: 1 }, t, callOptions(t));
    await transport.callTool(toolOf('search', t), { q: 2 }, t, callOptions(t));
    expect(server.peers.map((p) => p.request.url)).toEqual(['/api/search', '/api/search']);
    await server.peers[0].closed; // per-call connections are closed after the call
  });

  it('sends the subprotocol', async () => {
    const seen: string[][] = [];
    const { transport, template, tool } = await setup(
      echoJson,
      { protocol: 'utcp.v1' },
      {
        server: { handleProtocols: (p) => (seen.push([...p]), 'utcp.v1') },
      },
    );
    await transport.callTool(tool, {}, template, callOptions(template));
    expect(seen).toEqual([['utcp.v1']]);
  });
});

describe('websocket transport: streaming', () => {
  it('yields frames until stream_end (not yielded)', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => {
        peer.ws.send('{"n":1}');
        peer.ws.send(JSON.stringify({ type: 'tool_response', result: 2 }));
        peer.ws.send('{"type":"stream_end"}');
        peer.ws.send('{"n":"after end"}');
        return undefined;
      }),
    );
    expect(await collect(transport.callToolStream!(tool, {}, template, callOptions(template)))).toEqual([{ n: 1 }, 2]);
  });

  it('fails the stream when the connection drops mid-stream without stream_end (no close frame: 1006)', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => {
        peer.ws.send('"a"', () => peer.ws.terminate());
        return undefined;
      }),
    );
    const items: unknown[] = [];
    const error = await (async () => {
      for await (const item of transport.callToolStream!(tool, {}, template, callOptions(template))) items.push(item);
    })().catch((e: unknown) => e);
    expect(items).toEqual(['a']);
    expect(error).toMatchObject({ name: 'TransportError', code: 'TRANSPORT_FAILED' });
    expect((error as Error).message).toContain('cut off');
  });

  it('ends the stream when the server closes normally without stream_end', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => {
        peer.ws.send('"a"', () => peer.ws.close(1000));
        return undefined;
      }),
    );
    expect(await collect(transport.callToolStream!(tool, {}, template, callOptions(template)))).toEqual(['a']);
  });

  it('fails with TIMEOUT when no frame arrives within timeout seconds while streaming', async () => {
    const { transport, template, tool } = await setup((peer) => answerEach(peer, () => '"first"'), { timeout: 0.15 });
    const items: unknown[] = [];
    await expect(
      (async () => {
        for await (const item of transport.callToolStream!(tool, {}, template, callOptions(template))) items.push(item);
      })(),
    ).rejects.toMatchObject({ code: 'TIMEOUT' });
    expect(items).toEqual(['first']);
  });

  it('throws on a tool_error frame mid-stream', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => {
        peer.ws.send('1');
        peer.ws.send('{"type":"tool_error","error":{"message":"exploded"}}');
        return undefined;
      }),
    );
    await expect(collect(transport.callToolStream!(tool, {}, template, callOptions(template)))).rejects.toMatchObject({
      code: 'TOOL_ERROR',
      message: expect.stringContaining('exploded'),
    });
  });

  it('drops the pooled socket when the consumer stops early, so late frames never reach the next call', async () => {
    const { server, transport, template, tool } = await setup((peer) =>
      answerEach(peer, (m) => {
        if (m === '{"stream":true}') {
          peer.ws.send('1');
          peer.ws.send('2');
          return undefined;
        }
        return '"fresh"';
      }),
    );
    for await (const item of transport.callToolStream!(tool, { stream: true }, template, callOptions(template))) {
      expect(item).toBe(1);
      break;
    }
    await server.peers[0].closed;
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('fresh');
    expect(server.peers).toHaveLength(2);
  });
});

describe('websocket transport: pooling and correlation', () => {
  it('reuses one connection for sequential calls', async () => {
    const { server, transport, template, tool } = await setup(echoJson);
    await transport.callTool(tool, { i: 1 }, template, callOptions(template));
    await transport.callTool(tool, { i: 2 }, template, callOptions(template));
    expect(server.peers).toHaveLength(1);
    expect(server.peers[0].messages).toHaveLength(2);
  });

  it('serialises concurrent calls on the pooled socket without request ids', async () => {
    const events: string[] = [];
    const { server, transport, template, tool } = await setup((peer) =>
      answerEach(peer, (m) => {
        events.push(`recv ${m}`);
        events.push(`reply ${m}`);
        return m;
      }),
    );
    const [a, b] = await Promise.all([
      transport.callTool(tool, { i: 1 }, template, callOptions(template)),
      transport.callTool(tool, { i: 2 }, template, callOptions(template)),
    ]);
    expect([a, b]).toEqual([{ i: 1 }, { i: 2 }]);
    expect(server.peers).toHaveLength(1);
    expect(events).toEqual(['recv {"i":1}', 'reply {"i":1}', 'recv {"i":2}', 'reply {"i":2}']);
  });

  it('matches out-of-order replies by request_id and ignores frames for other ids', async () => {
    const { server, transport, template, tool } = await setup(
      async (peer) => {
        const first = JSON.parse(await peer.message(0));
        const second = JSON.parse(await peer.message(1)); // both requests are in flight at once
        peer.ws.send(JSON.stringify({ request_id: 'someone-else', result: 'stray' }));
        peer.ws.send(JSON.stringify({ request_id: second.id, type: 'tool_response', result: `answer ${second.q}` }));
        peer.ws.send(JSON.stringify({ request_id: first.id, type: 'tool_response', result: `answer ${first.q}` }));
      },
      { message: { id: 'UTCP_ARG_request_id_UTCP_ARG', q: 'UTCP_ARG_q_UTCP_ARG' } },
    );
    const results = await Promise.all([
      transport.callTool(tool, { q: 'one' }, template, callOptions(template)),
      transport.callTool(tool, { q: 'two' }, template, callOptions(template)),
    ]);
    expect(results).toEqual(['answer one', 'answer two']);
    expect(server.peers).toHaveLength(1);
    const ids = server.peers[0].messages.map((m) => JSON.parse(m).id);
    expect(ids[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(ids[0]).not.toBe(ids[1]);
  });

  it('uses a caller-supplied request_id for correlation', async () => {
    const { transport, template, tool } = await setup(
      (peer) =>
        answerEach(peer, (m) => {
          const { rid } = JSON.parse(m);
          peer.ws.send(JSON.stringify({ request_id: 'other', result: 'no' }));
          return JSON.stringify({ request_id: rid, v: 'yes' });
        }),
      { message: { rid: 'UTCP_ARG_request_id_UTCP_ARG' } },
    );
    expect(await transport.callTool(tool, { request_id: 42 }, template, callOptions(template))).toEqual({
      request_id: 42,
      v: 'yes',
    });
  });

  it('reconnects lazily after the server drops the pooled socket', async () => {
    let clientSawClose!: () => void;
    const closedOnClient = new Promise<void>((resolve) => (clientSawClose = resolve));
    const logger: Logger = { debug: (message) => message === 'websocket: connection closed' && clientSawClose() };
    const { server, transport, template, tool } = await setup(
      (peer, index) =>
        answerEach(peer, () => {
          const reply = JSON.stringify({ connection: index });
          if (index !== 0) return reply;
          peer.ws.send(reply, () => peer.ws.terminate());
          return undefined;
        }),
      {},
      { logger },
    );
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual({ connection: 0 });
    await closedOnClient;
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual({ connection: 1 });
    expect(server.peers).toHaveLength(2);
  });

  it('gives a call with header_fields its own connection carrying those headers', async () => {
    const { server, transport, template, tool } = await setup(echoJson, { header_fields: ['x-user', 'x-none'] });
    await transport.callTool(tool, { a: 1 }, template, callOptions(template));
    await transport.callTool(tool, { a: 2, 'x-user': 'alice', 'x-none': null }, template, callOptions(template));
    expect(server.peers).toHaveLength(2);
    expect(server.peers[0].request.headers['x-user']).toBeUndefined();
    expect(server.peers[1].request.headers['x-user']).toBe('alice');
    expect(server.peers[1].messages).toEqual(['{"a":2}']);
    await server.peers[1].closed;
  });
});

describe('websocket transport: faults and limits', () => {
  it('rejects a message above max_stream_item_bytes with RESPONSE_TOO_LARGE', async () => {
    const { transport, template, tool } = await setup(
      (peer) => answerEach(peer, () => 'x'.repeat(4096)),
      {},
      { limits: { max_stream_item_bytes: 1024 } },
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });

  it('rejects a malformed frame with PROTOCOL_ERROR', async () => {
    const { transport, template, tool } = await setup((peer) =>
      answerEach(peer, () => {
        // A final frame with reserved opcode 0x3: invalid per RFC 6455.
        (peer.ws as unknown as { _socket: import('node:net').Socket })._socket.write(Buffer.from([0x83, 0x00]));
        return undefined;
      }),
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('does not follow a redirect on the upgrade', async () => {
    let redirected = 0;
    const { transport, template, tool } = await setup(
      () => {},
      {},
      {
        server: {
          intercept: (req, _res, socket) => {
            if (socket && req.url === '/ws') {
              socket.end(
                'HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\nConnection: close\r\n\r\n',
              );
              return true;
            }
            if (req.url === '/elsewhere') redirected++;
            return false;
          },
        },
      },
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      message: expect.stringContaining('redirect'),
    });
    expect(redirected).toBe(0);
  });

  it('reports a refused upgrade as HttpStatusError', async () => {
    const { transport, template, tool } = await setup(
      () => {},
      {},
      {
        server: {
          intercept: (_req, _res, socket) => {
            if (!socket) return false;
            socket.end('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
            return true;
          },
        },
      },
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'HttpStatusError',
      status: 401,
    });
  });

  it('aborts a waiting call and drops its pooled socket', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const controller = new AbortController();
    const call = transport.callTool(tool, {}, template, callOptions(template, { signal: controller.signal }));
    const peer = await server.peer(0);
    await peer.message(0);
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    await peer.closed;
  });

  it('reports a refused TCP connection as TRANSPORT_FAILED', async () => {
    const server = await startWsServer();
    const url = `${server.url}/ws`;
    await server.close();
    const transport = createWebSocketTransport(createTestContext());
    onTestFinished(() => transport.close());
    const template: WebSocketCallTemplate = { call_template_type: 'websocket', url, timeout: 2 };
    await expect(transport.callTool(toolOf('x', template), {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'TRANSPORT_FAILED',
    });
  });
});

describe('websocket transport: discovery', () => {
  const manual = {
    utcp_version: '1.0.0',
    manual_version: '1.0.0',
    tools: [
      { name: 'echo', inputs: {} },
      { name: 'own', tool_call_template: { call_template_type: 'websocket', url: 'wss://other.example/ws' } },
    ],
  };

  it('sends {"type":"utcp"}, skips unrelated frames and lets tools inherit the raw template', async () => {
    const { server, transport, template } = await setup((peer) =>
      answerEach(peer, () => {
        peer.ws.send('{"hello":"client"}');
        peer.ws.send('not json');
        return JSON.stringify(manual);
      }),
    );
    const raw = { ...template, headers: { Authorization: '${TOKEN}' } };
    const result = await transport.registerManual(template, callOptions(raw));
    expect(server.peers[0].messages).toEqual(['{"type":"utcp"}']);
    const tools = (result.manual as { tools: Array<{ tool_call_template: unknown }> }).tools;
    expect(tools[0].tool_call_template).toEqual(raw);
    expect(tools[1].tool_call_template).toEqual(manual.tools[1].tool_call_template);
  });

  it('reuses the discovery connection for calls of inheriting tools', async () => {
    const { server, transport, template } = await setup(
      (peer) => answerEach(peer, (m) => (m === 'manual' ? JSON.stringify(manual) : '"called"')),
      { discovery_message: 'manual' },
    );
    await transport.registerManual(template, callOptions(template));
    expect(await transport.callTool(toolOf('echo', template), {}, template, callOptions(template))).toBe('called');
    expect(server.peers).toHaveLength(1);
    expect(server.peers[0].messages[0]).toBe('manual');
  });

  it('times out when no manual arrives', async () => {
    const { transport, template } = await setup((peer) => answerEach(peer, () => '{"not":"a manual"}'), {
      timeout: 0.15,
    });
    await expect(transport.registerManual(template, callOptions(template))).rejects.toMatchObject({ code: 'TIMEOUT' });
  });

  it('does not connect when discovery_message is null', async () => {
    const { server, transport, template } = await setup(() => {}, { discovery_message: null });
    const result = await transport.registerManual(template, callOptions(template));
    expect(result.manual).toEqual({ tools: [] });
    expect(server.peers).toHaveLength(0);
  });
});

describe('websocket transport: lifecycle', () => {
  it('close() closes pooled sockets, fails running calls and rejects later ones; twice is safe', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const call = transport.callTool(tool, {}, template, callOptions(template));
    const peer = await server.peer(0);
    await peer.message(0);
    const failed = expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await transport.close();
    await failed;
    await peer.closed;
    await transport.close();
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
    });
  });

  it('deregisterManual closes that manual’s pooled connection only', async () => {
    const { server, transport, template, tool } = await setup(echoJson);
    await transport.callTool(tool, {}, template, callOptions(template));
    const otherTool = toolOf('echo', template, 'other');
    await transport.callTool(otherTool, {}, template, callOptions(template, { manualName: 'other' }));
    expect(server.peers).toHaveLength(2);
    await transport.deregisterManual!(template, { manualName: 'demo' });
    await server.peers[0].closed;
    expect(
      await transport.callTool(otherTool, { still: 'open' }, template, callOptions(template, { manualName: 'other' })),
    ).toEqual({ got: { still: 'open' } });
    expect(server.peers).toHaveLength(2);
  });
});
