import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { startTcpServer } from '../fixtures/sockets/tcp-server.js';

describe('tcp through UtcpClient', () => {
  it('registers by discovery, calls a tool with a {tool, args} wrapper and closes', async () => {
    const manual = {
      utcp_version: '1.0.0',
      manual_version: '1.0.0',
      tools: [
        {
          name: 'add',
          description: 'Adds two numbers',
          inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        },
      ],
    };
    // NDJSON-style protocol: one JSON request line, one JSON reply line, connection kept open by the server.
    const server = await startTcpServer((socket) => {
      let buffered = '';
      socket.on('data', (chunk) => {
        buffered += chunk.toString();
        const end = buffered.indexOf('\n');
        if (end < 0) return;
        const request = JSON.parse(buffered.slice(0, end));
        if (request.type === 'utcp') socket.write(`${JSON.stringify(manual)}\n`);
        else socket.write(`${JSON.stringify({ tool: request.tool, sum: request.args.a + request.args.b })}\n`);
      });
    });
    onTestFinished(() => server.close());
    const client = await UtcpClient.create({ variables: { calc_HOST: '127.0.0.1' } });
    onTestFinished(() => client.close());

    const result = await client.registerManual({
      name: 'calc',
      call_template_type: 'tcp',
      host: '${HOST}',
      port: server.port,
      framing_strategy: 'delimiter',
      message_delimiter: '\\n',
      request_wrapper: 'tool_args',
      timeout: 5000,
    });
    expect(result.errors).toEqual([]);
    expect(await client.callTool('calc.add', { a: 2, b: 3 })).toEqual({ tool: 'add', sum: 5 });
    expect(server.received[1].toString()).toBe('{"tool":"add","args":{"a":2,"b":3}}\n');
    expect((await client.getTool('calc.add'))!.tool_call_template).toMatchObject({ host: '${HOST}' });
    await client.close();
  });
});
