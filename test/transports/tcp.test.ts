import { once } from 'node:events';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { TcpCallTemplate } from '../../src/index.js';
import { createTcpTransport } from '../../src/transports/tcp/index.js';
import { createTestContext } from '../helpers/context.js';
import { callOptions, collect, toolOf } from '../fixtures/sockets/call-helpers.js';
import { onceReceived, startTcpServer, type TcpTestServer } from '../fixtures/sockets/tcp-server.js';

async function setup(
  onConnection: Parameters<typeof startTcpServer>[0],
  extra: Partial<TcpCallTemplate> = {},
  limits = {},
) {
  const server = await startTcpServer(onConnection);
  const ctx = createTestContext({ limits: { ...createTestContext().limits, ...limits } });
  const transport = createTcpTransport(ctx);
  onTestFinished(async () => {
    await transport.close();
    await server.close();
  });
  const template: TcpCallTemplate = {
    call_template_type: 'tcp',
    host: '127.0.0.1',
    port: server.port,
    timeout: 5000,
    ...extra,
  };
  return { server, transport, template, tool: toolOf('echo', template) };
}

/** Replies `reply` once the request is complete (json payload ended with `}` or the client half-closed). */
function replyAfterRequest(reply: Buffer | string, opts: { end?: boolean } = {}) {
  return (socket: import('node:net').Socket) => {
    onceReceived(
      socket,
      (all) => all.length > 0,
      () => {
        socket.write(reply);
        if (opts.end !== false) socket.end();
      },
    );
  };
}

function lengthPrefixed(body: string, bytes = 4, endian: 'big' | 'little' = 'big'): Buffer {
  const payload = Buffer.from(body);
  const prefix = Buffer.alloc(bytes);
  if (bytes === 1) prefix.writeUInt8(payload.length);
  else if (bytes === 2) endian === 'big' ? prefix.writeUInt16BE(payload.length) : prefix.writeUInt16LE(payload.length);
  else if (bytes === 4) endian === 'big' ? prefix.writeUInt32BE(payload.length) : prefix.writeUInt32LE(payload.length);
  else
    endian === 'big'
      ? prefix.writeBigUInt64BE(BigInt(payload.length))
      : prefix.writeBigUInt64LE(BigInt(payload.length));
  return Buffer.concat([prefix, payload]);
}

async function receivedBy(server: TcpTestServer, index = 0): Promise<Buffer> {
  return server.closedConnection(index);
}

describe('tcp transport: request payloads', () => {
  it('sends the arguments as JSON and parses a JSON reply read to EOF', async () => {
    const { server, transport, template, tool } = await setup(replyAfterRequest('{"ok":true,"n":2}'));
    const result = await transport.callTool(tool, { x: 1, s: 'a b' }, template, callOptions(template));
    expect(result).toEqual({ ok: true, n: 2 });
    expect(JSON.parse((await receivedBy(server)).toString())).toEqual({ x: 1, s: 'a b' });
  });

  it('wraps the arguments as {tool, args} with the bare tool name', async () => {
    const { server, transport, template, tool } = await setup(replyAfterRequest('ok'), {
      request_wrapper: 'tool_args',
    });
    await transport.callTool(tool, { q: 'x' }, template, callOptions(template));
    expect(JSON.parse((await receivedBy(server)).toString())).toEqual({ tool: 'echo', args: { q: 'x' } });
  });

  it('sends the qualified tool name when tool_name_on_wire is "qualified"', async () => {
    const { server, transport, template, tool } = await setup(replyAfterRequest('ok'), {
      request_wrapper: 'tool_args',
      tool_name_on_wire: 'qualified',
    });
    await transport.callTool(tool, {}, template, callOptions(template));
    expect(JSON.parse((await receivedBy(server)).toString())).toEqual({ tool: 'demo.echo', args: {} });
  });

  it('fills a text template: strings raw, other values as JSON, unknown placeholders unchanged', async () => {
    const { server, transport, template, tool } = await setup(replyAfterRequest('done'), {
      request_data_format: 'text',
      request_data_template:
        'GET UTCP_ARG_key_UTCP_ARG n=UTCP_ARG_n_UTCP_ARG o=UTCP_ARG_o_UTCP_ARG UTCP_ARG_missing_UTCP_ARG',
    });
    const result = await transport.callTool(
      tool,
      { key: 'a "b"', n: 5, o: { k: [1] } },
      template,
      callOptions(template),
    );
    expect(result).toBe('done');
    expect((await receivedBy(server)).toString()).toBe('GET a "b" n=5 o={"k":[1]} UTCP_ARG_missing_UTCP_ARG');
  });

  it('does not re-substitute a placeholder carried inside an argument value', async () => {
    const { server, transport, template, tool } = await setup(replyAfterRequest('done'), {
      request_data_format: 'text',
      request_data_template: 'A=UTCP_ARG_a_UTCP_ARG B=UTCP_ARG_b_UTCP_ARG',
    });
    await transport.callTool(tool, { a: 'UTCP_ARG_b_UTCP_ARG', b: 'secret' }, template, callOptions(template));
    expect((await receivedBy(server)).toString()).toBe('A=UTCP_ARG_b_UTCP_ARG B=secret');
  });

  it('joins the argument values with one space for text without a template', async () => {
    const { server, transport, template, tool } = await setup(replyAfterRequest('done'), {
      request_data_format: 'text',
    });
    await transport.callTool(tool, { a: 'x', b: 2, c: true, d: null }, template, callOptions(template));
    expect((await receivedBy(server)).toString()).toBe('x 2 true');
  });

  it('ends the write side after sending when half_close is set', async () => {
    const { server, transport, template, tool } = await setup(
      (socket) => {
        const chunks: Buffer[] = [];
        socket.on('data', (c) => chunks.push(c));
        socket.on('end', () => socket.end(`got ${Buffer.concat(chunks).length} bytes`));
      },
      { half_close: true },
    );
    const result = await transport.callTool(tool, { a: 1 }, template, callOptions(template));
    expect(result).toBe('got 7 bytes');
    expect((await receivedBy(server)).toString()).toBe('{"a":1}');
  });
});

describe('tcp transport: framing', () => {
  for (const [bytes, endian] of [
    [1, 'big'],
    [2, 'little'],
    [4, 'big'],
    [8, 'little'],
  ] as const) {
    it(`frames request and response with a ${bytes}-byte ${endian}-endian length prefix`, async () => {
      const { server, transport, template, tool } = await setup(
        (socket) => {
          onceReceived(
            socket,
            (all) => all.length >= bytes + 7,
            () => socket.write(lengthPrefixed('{"r":42}', bytes, endian)),
          ); // server keeps the socket open
        },
        { framing_strategy: 'length_prefix', length_prefix_bytes: bytes, length_prefix_endian: endian },
      );
      const result = await transport.callTool(tool, { a: 1 }, template, callOptions(template));
      expect(result).toEqual({ r: 42 });
      expect(await receivedBy(server)).toEqual(lengthPrefixed('{"a":1}', bytes, endian));
    });
  }

  it('rejects a length prefix claiming 4 GiB before reading the body', async () => {
    const { transport, template, tool } = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.length > 0,
          () => socket.write(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x41])),
        );
      },
      { framing_strategy: 'length_prefix', timeout: 20_000 },
    );
    const started = Date.now();
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'TransportError',
      code: 'RESPONSE_TOO_LARGE',
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('fails with PROTOCOL_ERROR when the server closes in the middle of a length-prefixed message', async () => {
    const { transport, template, tool } = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.length > 0,
          () => socket.end(Buffer.concat([Buffer.from([0, 0, 0, 10]), Buffer.from('abcd')])),
        );
      },
      { framing_strategy: 'length_prefix' },
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('reads up to an escaped delimiter split across packets and appends it to the request', async () => {
    const { server, transport, template, tool } = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.includes('\r\n'),
          () => {
            socket.write('{"part":"one"}\r');
            socket.write('\nleft over');
          },
        );
      },
      { framing_strategy: 'delimiter', message_delimiter: '\\r\\n' },
    );
    const result = await transport.callTool(tool, { a: 'b' }, template, callOptions(template));
    expect(result).toEqual({ part: 'one' });
    expect((await receivedBy(server)).toString()).toBe('{"a":"b"}\r\n');
  });

  it('uses the NUL delimiter by default and the literal text when interpret_escape_sequences is false', async () => {
    const { server, transport, template, tool } = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.includes('\\n'),
          () => socket.write('pong\\nrest'),
        );
      },
      { framing_strategy: 'delimiter', message_delimiter: '\\n', interpret_escape_sequences: false },
    );
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('pong');
    expect((await receivedBy(server)).toString()).toBe('{}\\n');

    const nul = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.includes(0),
          () => socket.write('7\u0000'),
        );
      },
      { framing_strategy: 'delimiter' },
    );
    expect(await nul.transport.callTool(nul.tool, {}, nul.template, callOptions(nul.template))).toBe(7);
    expect((await receivedBy(nul.server)).toString()).toBe('{}\u0000');
  });

  it('fails with PROTOCOL_ERROR when the connection closes before the delimiter', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('no delimiter here'), {
      framing_strategy: 'delimiter',
      message_delimiter: '\\n',
    });
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('reads exactly fixed_message_length bytes while the server keeps the socket open', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('12345678extra', { end: false }), {
      framing_strategy: 'fixed_length',
      fixed_message_length: 8,
    });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe(12345678);
  });

  it('stops after one complete JSON value even with braces inside strings and the socket still open', async () => {
    const { transport, template, tool } = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.length > 0,
          () => {
            socket.write('  {"text":"a } \\" ] {","list":[1,{"b":');
            socket.write('[2]}]} {"second":true}');
          },
        );
      },
      { framing_strategy: 'json' },
    );
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual({
      text: 'a } " ] {',
      list: [1, { b: [2] }],
    });
  });

  it('rejects a reply that cannot start a JSON value under json framing', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('<html>garbage</html>', { end: false }), {
      framing_strategy: 'json',
    });
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('returns every NDJSON line as an array from callTool', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('{"i":1}\r\n\n"two"\n3\n[4]'), {
      framing_strategy: 'ndjson',
    });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toEqual([{ i: 1 }, 'two', 3, [4]]);
  });

  it('treats an unterminated last NDJSON line that is not a whole JSON value as cut off', async () => {
    for (const tail of ['3', 'not json', '{"i":']) {
      const { transport, template, tool } = await setup(replyAfterRequest(`{"i":1}\n${tail}`), {
        framing_strategy: 'ndjson',
      });
      await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
        name: 'TransportError',
        code: 'PROTOCOL_ERROR',
        message: expect.stringContaining('in the middle of a line'),
      });
    }
  });

  it('streams NDJSON lines as they arrive', async () => {
    let socketRef: import('node:net').Socket | undefined;
    const { transport, template, tool } = await setup(
      (socket) => {
        socketRef = socket;
        onceReceived(
          socket,
          (all) => all.length > 0,
          () => socket.write('{"i":1}\n'),
        );
      },
      { framing_strategy: 'ndjson' },
    );
    const items: unknown[] = [];
    for await (const item of transport.callToolStream!(tool, {}, template, callOptions(template))) {
      items.push(item);
      // The second line is only sent after the first was received: proves incremental delivery.
      if (items.length === 1) socketRef!.end('{"i":2}\n');
    }
    expect(items).toEqual([{ i: 1 }, { i: 2 }]);
  });

  it('yields exactly one item when streaming with a non-NDJSON framing', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('{"one":1}'));
    expect(await collect(transport.callToolStream!(tool, {}, template, callOptions(template)))).toEqual([{ one: 1 }]);
  });

  it('truncates stream framing at max_response_size', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('abcdefghij', { end: false }), {
      max_response_size: 4,
    });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('abcd');
  });

  it('returns the bytes received so far when stream framing times out after data arrived', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('partial', { end: false }), { timeout: 150 });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('partial');
  });

  it('caps non-stream framings at max_response_bytes', async () => {
    const { transport, template, tool } = await setup(
      replyAfterRequest('x'.repeat(100), { end: false }),
      { framing_strategy: 'delimiter' },
      { max_response_bytes: 32 },
    );
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });
});

describe('tcp transport: decoding', () => {
  it('returns raw bytes when response_byte_format is null', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest(Buffer.from([1, 2, 255])), {
      response_byte_format: null,
    });
    const result = await transport.callTool(tool, {}, template, callOptions(template));
    expect(result).toBeInstanceOf(Uint8Array);
    expect([...(result as Uint8Array)]).toEqual([1, 2, 255]);
  });

  it('decodes with the response_byte_format label', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest(Buffer.from([0x63, 0x61, 0x66, 0xe9])), {
      response_byte_format: 'latin-1',
    });
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('café');
  });

  it('falls back to the text when the reply is not JSON', async () => {
    const { transport, template, tool } = await setup(replyAfterRequest('{not json'));
    expect(await transport.callTool(tool, {}, template, callOptions(template))).toBe('{not json');
  });
});

describe('tcp transport: failures, timeouts and cancellation', () => {
  it('times out when the server never answers under stream framing', async () => {
    const { transport, template, tool } = await setup(() => {}, { timeout: 100 });
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'UtcpTimeoutError',
      code: 'TIMEOUT',
    });
  });

  it('reports a refused connection as TRANSPORT_FAILED', async () => {
    const server = await startTcpServer();
    const port = server.port;
    await server.close();
    const transport = createTcpTransport(createTestContext());
    const template: TcpCallTemplate = { call_template_type: 'tcp', host: '127.0.0.1', port, timeout: 2000 };
    await expect(transport.callTool(toolOf('x', template), {}, template, callOptions(template))).rejects.toMatchObject({
      name: 'TransportError',
      code: 'TRANSPORT_FAILED',
    });
  });

  it('aborts a running call and closes its connection', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const controller = new AbortController();
    const call = transport.callTool(tool, {}, template, callOptions(template, { signal: controller.signal }));
    await server.nextConnection();
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    await server.closedConnection(0);
  });

  it('close() ends running calls, rejects later ones and can be called twice', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const call = transport.callTool(tool, {}, template, callOptions(template));
    await server.nextConnection();
    const failed = expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await transport.close();
    await failed;
    await server.closedConnection(0);
    await transport.close();
    await expect(transport.callTool(tool, {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'CLIENT_CLOSED',
    });
  });

  it('deregisterManual ends the running calls of that manual', async () => {
    const { server, transport, template, tool } = await setup(() => {});
    const call = transport.callTool(tool, {}, template, callOptions(template));
    await server.nextConnection();
    const failed = expect(call).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await transport.deregisterManual!(template, { manualName: 'demo' });
    await failed;
  });

  it('connects to an IPv6 host', async () => {
    const server = await startTcpServer(replyAfterRequest('"v6"'), '::1');
    const transport = createTcpTransport(createTestContext());
    onTestFinished(async () => {
      await transport.close();
      await server.close();
    });
    const template: TcpCallTemplate = { call_template_type: 'tcp', host: '[::1]', port: server.port, timeout: 5000 };
    expect(await transport.callTool(toolOf('x', template), {}, template, callOptions(template))).toBe('v6');
  });

  it('rejects a template without a valid port before any I/O', async () => {
    const transport = createTcpTransport(createTestContext());
    const template = { call_template_type: 'tcp', host: '127.0.0.1', port: 70000 } as TcpCallTemplate;
    await expect(transport.callTool(toolOf('x', template), {}, template, callOptions(template))).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
  });
});

describe('tcp transport: discovery', () => {
  const manual = {
    utcp_version: '1.0.0',
    manual_version: '1.0.0',
    tools: [
      { name: 'plain', description: 'inherits', inputs: {} },
      {
        name: 'own',
        tool_call_template: { call_template_type: 'tcp', host: '127.0.0.1', port: 1, framing_strategy: 'json' },
      },
    ],
  };

  it('sends {"type":"utcp"} and lets tools without a template inherit the raw manual template', async () => {
    const { server, transport, template } = await setup(replyAfterRequest(JSON.stringify(manual)));
    const raw = { ...template, port: '${PORT}' } as unknown as TcpCallTemplate;
    const result = await transport.registerManual(template, callOptions(raw));
    expect((await receivedBy(server)).toString()).toBe('{"type":"utcp"}');
    const tools = (result.manual as { tools: Array<{ name: string; tool_call_template: unknown }> }).tools;
    expect(tools[0].tool_call_template).toEqual(raw);
    expect(tools[1].tool_call_template).toEqual(manual.tools[1].tool_call_template);
  });

  it('sends a custom discovery message with the template framing', async () => {
    const { server, transport, template } = await setup(
      (socket) => {
        onceReceived(
          socket,
          (all) => all.includes('\n'),
          () => socket.write(`${JSON.stringify(manual)}\n`),
        );
      },
      { framing_strategy: 'delimiter', message_delimiter: '\\n', discovery_message: { action: 'list' } },
    );
    const result = await transport.registerManual(template, callOptions(template));
    expect((await receivedBy(server)).toString()).toBe('{"action":"list"}\n');
    expect((result.manual as { tools: unknown[] }).tools).toHaveLength(2);
  });

  it('fails with PROTOCOL_ERROR when the discovery reply is not JSON', async () => {
    const { transport, template } = await setup(replyAfterRequest('hello'));
    await expect(transport.registerManual(template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('fails when the discovery reply has no tools array', async () => {
    const { transport, template } = await setup(replyAfterRequest('{"tools":"nope"}'));
    await expect(transport.registerManual(template, callOptions(template))).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('does no I/O and returns no tools when discovery_message is null', async () => {
    const { server, transport, template } = await setup(() => {}, { discovery_message: null });
    const result = await transport.registerManual(template, callOptions(template));
    expect(result.manual).toEqual({ tools: [] });
    expect(result.warnings?.[0]).toMatch(/disabled/);
    expect(server.received).toHaveLength(0);
  });

  it('times out discovery when the server never answers', async () => {
    const { transport, template } = await setup((socket) => void once(socket, 'data'), { timeout: 100 });
    await expect(transport.registerManual(template, callOptions(template))).rejects.toMatchObject({ code: 'TIMEOUT' });
  });
});
