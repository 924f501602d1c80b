import { describe, expect, it, onTestFinished } from 'vitest';
import type { UdpCallTemplate } from '../../src/index.js';
import { createUdpTransport } from '../../src/transports/udp/index.js';
import { createTestContext } from '../helpers/context.js';
import { callOptions, collect, toolOf } from '../fixtures/sockets/call-helpers.js';
import { sendFrom, startUdpServer, type UdpTestServer } from '../fixtures/sockets/udp-server.js';

async function setup(
  onDatagram: Parameters<typeof startUdpServer>[0],
  extra: Partial<UdpCallTemplate> = {},
  opts: { host?: string; limits?: object } = {},
) {
  const server = await startUdpServer(onDatagram, opts.host ?? '127.0.0.1');
  const ctx = createTestContext({ limits: { ...createTestContext().limits, ...opts.limits } });
  const transport = createUdpTransport(ctx);
  onTestFinished(async () => {
    await transport.close();
    await server.close();
  });
  const template: UdpCallTemplate = {
    call_template_type: 'udp',
    host: opts.host ?? '127.0.0.1',
    port: server.port,
    timeout: 5000,
    ...extra,
  };
  return { server, transport, template, tool: toolOf('echo', template) };
}

const replyWith =
  (...datagrams: string[]) =>
  (_data: Buffer, from: import('node:dgram').RemoteInfo, server: UdpTestServer) => {
    void (async () => {
      for (const d of datagrams) await server.reply(d, from);
    })();
  };

/** Open UDP sockets of this process (the test servers included). */
function openUdpSockets(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'UDPWRAP').length;
}

describe('udp transport: calls', () => {
  it('sends the arguments as one JSON datagram and parses the JSON reply', async () => {
    const { server, transport, template, tool } = await setup(replyWith('{"sum":3}'));
    expect(await transport.callTool(tool, { a: 1, b: 2 }, template, callOptions(template))).toEqual({ sum: 3 });
    expect(server.received.map((d) => d.data.toString())).toEqual(['{"a":1,"b":2}']);
  });

  it('fills a text template and wraps JSON requests as {tool, args}', async () => {
    const text = await setup(replyWith('pong'), {
      request_data_format: 'text',
      request_data_template: 'PING UTCP_ARG_host_UTCP_ARG UTCP_ARG_n_UTCP_ARG',
    });
    expect(
      await text.transport.callTool(text.tool, { host: 'h1', n: 3 }, text.template, callOptions(text.template)),
    ).toBe('pong');
    expect(text.server.received[0].data.toString()).toBe('PING h1 3');

    const wrapped = await setup(replyWith('ok'), { request_wrapper: 'tool_args' });
    await wrapped.transport.callTool(wrapped.tool, { q: 1 }, wrapped.template, callOptions(wrapped.template));
    expect(JSON.parse(wrapped.server.received[0].data.toString())).toEqual({ tool: 'echo', args: { q: 1 } });
  });

  it('concatenates number_of_response_datagrams replies before decoding', async () => {
    const { transport, template, tool } = await setup(replyWith('{"a":', '1,"b"', ':2}'), {
      number_of_response_datagrams: 3,
    });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual({ a: 1, b: 2 });
  });

  it('ends collection when a later datagram does not arrive within 1000 ms', async () => {
    const { transport, template, tool } = await setup(replyWith('only one'), { number_of_response_datagrams: 2 });
    const started = Date.now();
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('only one');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('returns "" right after sending in fire-and-forget mode (and empty bytes in raw mode)', async () => {
    const { server, transport, template, tool } = await setup(() => {}, { number_of_response_datagrams: 0 });
    expect(await transport.callTool(tool, { fire: true }, template, callOptions(template))).toBe('');
    expect((await server.nextDatagram()).data.toString()).toBe('{"fire":true}');
    const raw = { ...template, response_byte_format: null };
    const result = await transport.callTool(tool, {}, raw, callOptions(raw));
    expect(result).toBeInstanceOf(Uint8Array);
    expect((result as Uint8Array).length).toBe(0);
  });

  it('ignores datagrams from another address than the target host', async () => {
    const { transport, template, tool } = await setup((_data, from, server) => {
      void (async () => {
        await sendFrom('127.0.0.2', '"spoofed"', from);
        await server.reply('"genuine"', from);
      })();
    });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('genuine');
  });

  it('talks to an IPv6 host', async () => {
    const { transport, template, tool } = await setup(replyWith('[6]'), { host: '[::1]' }, { host: '::1' });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual([6]);
  });

  it('returns raw bytes when response_byte_format is null', async () => {
    const { transport, template, tool } = await setup(replyWith('AB'), { response_byte_format: null });
    const result = await transport.callTool(tool, {}, template, callOptions(template));
    expect([...(result as Uint8Array)]).toEqual([0x41, 0x42]);
  });

  it('streams exactly one item', async () => {
    const { transport, template, tool } = await setup(replyWith('{"x":1}'));
    expect(await collect(transport.callToolStream!(tool, {}, template, callOptions(template)))).toEqual([{ x: 1 }]);
  });
});

describe('udp transport: failures and cleanup', () => {
  it('rejects a request above 65,507 bytes before sending', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    await expect(
      transport.callTool(tool, { big: 'x'.repeat(65_510) }, template, callOptions(template)),
    ).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      message: expect.stringContaining('65507'),
    });
    expect(server.received).toHaveLength(0);
  });

  it('times out when no reply arrives and closes its socket', async () => {
    const { server, transport, template, tool } = await setup(() => {}, { timeout: 100 });
    const before = openUdpSockets();
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'UtcpTimeoutError',
      code: 'TIMEOUT',
    });
    expect(server.received).toHaveLength(1);
    expect(openUdpSockets()).toBe(before);
  });

  it('accepts timeout_ms as an alias of timeout', async () => {
    const { transport, template, tool } = await setup(() => {}, {
      timeout: undefined,
      timeout_ms: 80,
    } as Partial<UdpCallTemplate>);
    const started = Date.now();
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('aborts a waiting call and closes its socket', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const before = openUdpSockets();
    const controller = new AbortController();
    const call = transport.callTool(tool, {}, template, callOptions(template, { signal: controller.signal }));
    await server.nextDatagram();
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(openUdpSockets()).toBe(before);
  });

  it('close() ends waiting calls and rejects later ones', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const call = transport.callTool(tool, {}, template, callOptions(template));
    await server.nextDatagram();
    const failed = expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await transport.close();
    await failed;
    await transport.close();
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
    });
  });

  it('rejects replies above max_response_bytes', async () => {
    const { transport, template, tool } = await setup(
      replyWith('x'.repeat(64)),
      {},
      { limits: { max_response_bytes: 16 } },
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });
});

describe('udp transport: discovery', () => {
  it('sends the discovery message and lets tools without a template inherit the raw manual template', async () => {
    const manual = { utcp_version: '1.0.0', manual_version: '1', tools: [{ name: 'ping', inputs: {} }] };
    const { server, transport, template } = await setup(replyWith(JSON.stringify(manual)), {
      discovery_message: 'DISCOVER',
    });
    const raw = { ...template, host: '${UDP_HOST}' } as UdpCallTemplate;
    const result = await transport.registerManual(template, callOptions(raw));
    expect(server.received[0].data.toString()).toBe('DISCOVER');
    expect((result.manual as { tools: Array<{ tool_call_template: unknown }> }).tools[0].tool_call_template).toEqual(
      raw,
    );
  });

  it('fails with PROTOCOL_ERROR when the reply is not JSON', async () => {
    const { transport, template } = await setup(replyWith('not json'));
    await expect(transport.registerManual(template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('does no I/O when discovery_message is null', async () => {
    const { server, transport, template } = await setup(() => {}, { discovery_message: null });
    const result = await transport.registerManual(template, callOptions(template));
    expect(result.manual).toEqual({ tools: [] });
    expect(server.received).toHaveLength(0);
  });
});
