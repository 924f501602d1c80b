/**
 * A calculator over WebSocket (`ws` on 127.0.0.1, port 0). It answers the UTCP discovery message
 * `{"type":"utcp"}` with a manual whose tools carry their own message templates, then serves requests
 * `{"request_id", "tool", "args"}` with `tool_response` / `tool_error` frames; `countdown` streams
 * several `tool_response` frames and ends with `stream_end`.
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

interface Request {
  type?: string;
  request_id?: string;
  tool?: string;
  args?: Record<string, number>;
}

/** The call template of one tool: a JSON message with a request id and one placeholder per argument. */
function toolTemplate(url: string, tool: string, argNames: string[]) {
  const args = Object.fromEntries(argNames.map((name) => [name, `UTCP_ARG_${name}_UTCP_ARG`]));
  return { call_template_type: 'websocket', url, message: { request_id: 'UTCP_ARG_request_id_UTCP_ARG', tool, args } };
}

function manual(url: string) {
  const numbers = (...names: string[]) => ({
    type: 'object',
    properties: Object.fromEntries(names.map((n) => [n, { type: 'number' }])),
    required: names,
  });
  return {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'add',
        description: 'Add two numbers',
        inputs: numbers('a', 'b'),
        tool_call_template: toolTemplate(url, 'add', ['a', 'b']),
      },
      {
        name: 'divide',
        description: 'Divide a by b',
        inputs: numbers('a', 'b'),
        tool_call_template: toolTemplate(url, 'divide', ['a', 'b']),
      },
      {
        name: 'countdown',
        description: 'Count down from a number, one frame per step',
        inputs: numbers('from'),
        tool_call_template: toolTemplate(url, 'countdown', ['from']),
      },
    ],
  };
}

function serve(socket: WebSocket, url: string): void {
  socket.on('message', (data) => {
    const request = JSON.parse(data.toString()) as Request;
    const reply = (frame: object) => socket.send(JSON.stringify({ request_id: request.request_id, ...frame }));
    const { a = 0, b = 0, from = 0 } = request.args ?? {};
    if (request.type === 'utcp') return socket.send(JSON.stringify(manual(url)));
    if (request.tool === 'add') return reply({ type: 'tool_response', result: a + b });
    if (request.tool === 'divide') {
      return b === 0
        ? reply({ type: 'tool_error', error: 'division by zero' })
        : reply({ type: 'tool_response', result: a / b });
    }
    if (request.tool === 'countdown') {
      for (let n = from; n >= 0; n--) reply({ type: 'tool_response', result: n });
      return reply({ type: 'stream_end' });
    }
    reply({ type: 'tool_error', error: `unknown tool ${request.tool}` });
  });
}

export async function startWebSocketServer(): Promise<{ url: string; close(): Promise<void> }> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  server.on('connection', (socket) => serve(socket, url));
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of server.clients) socket.terminate();
        server.close(() => resolve());
      }),
  };
}
