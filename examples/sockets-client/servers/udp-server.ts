/**
 * A calculator over UDP (node:dgram on 127.0.0.1, port 0): one JSON datagram in, one JSON datagram
 * back. `{"type":"utcp"}` returns the manual; `{"tool", "args"}` calls a tool. Requests for `lost`
 * get no answer, as happens to datagrams on a real network.
 */
import { createSocket } from 'node:dgram';
import { once } from 'node:events';

const MANUAL = {
  utcp_version: '1.0.1',
  manual_version: '1.0.0',
  tools: [
    {
      name: 'add',
      description: 'Add two numbers',
      inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    },
    { name: 'lost', description: 'Its answer never arrives', inputs: { type: 'object', properties: {} } },
  ],
};

export async function startUdpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const socket = createSocket('udp4');
  socket.on('message', (data, from) => {
    const request = JSON.parse(data.toString('utf8')) as {
      type?: string;
      tool?: string;
      args?: Record<string, number>;
    };
    let answer: unknown;
    if (request.type === 'utcp') answer = MANUAL;
    else if (request.tool === 'add') answer = (request.args?.a ?? 0) + (request.args?.b ?? 0);
    else if (request.tool === 'lost') return;
    else answer = { error: `unknown tool ${request.tool}` };
    socket.send(JSON.stringify(answer), from.port, from.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return {
    port: socket.address().port,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
