/**
 * A calculator over raw TCP (node:net on 127.0.0.1, port 0). Requests are JSON, one per line
 * (`{"type":"utcp"}` for discovery, `{"tool", "args"}` for calls); each answer is JSON on one line.
 * When the client ends its side after a request (half-close), the server answers and ends too:
 * that is how `countdown` streams several lines (NDJSON) and then finishes.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';

interface Request {
  type?: string;
  tool?: string;
  args?: Record<string, number>;
}

function manual(port: number) {
  return {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'add',
        description: 'Add two numbers',
        inputs: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
        // no tool_call_template: the tool uses the manual's template (one JSON line each way)
      },
      {
        name: 'countdown',
        description: 'Count down from a number, one line per step',
        inputs: { type: 'object', properties: { from: { type: 'integer' } }, required: ['from'] },
        tool_call_template: {
          call_template_type: 'tcp',
          host: '127.0.0.1',
          port,
          request_wrapper: 'tool_args',
          framing_strategy: 'ndjson',
          half_close: true,
        },
      },
      {
        name: 'slow',
        description: 'Never answers (to show a timeout)',
        inputs: { type: 'object', properties: {} },
      },
    ],
  };
}

/** The answer lines of one request. */
function answer(request: Request, port: number): string[] {
  const { a = 0, b = 0, from = 0 } = request.args ?? {};
  if (request.type === 'utcp') return [JSON.stringify(manual(port))];
  if (request.tool === 'add') return [JSON.stringify(a + b)];
  if (request.tool === 'countdown') return Array.from({ length: from + 1 }, (_, i) => JSON.stringify(from - i));
  if (request.tool === 'slow') return [];
  return [JSON.stringify({ error: `unknown tool ${request.tool}` })];
}

function serve(socket: Socket, port: number): void {
  let buffered = '';
  const handle = (line: string) => {
    for (const out of answer(JSON.parse(line) as Request, port)) socket.write(`${out}\n`);
  };
  socket.on('data', (chunk) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end >= 0; end = buffered.indexOf('\n')) {
      handle(buffered.slice(0, end));
      buffered = buffered.slice(end + 1);
    }
  });
  socket.on('end', () => {
    if (buffered.trim()) handle(buffered);
    socket.end();
  });
  socket.on('error', () => {}); // a client that goes away mid-answer is not an error here
}

export async function startTcpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serve(socket, (server.address() as AddressInfo).port);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
