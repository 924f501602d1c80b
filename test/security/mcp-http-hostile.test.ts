/**
 * docs/design/threat-model.md#mcp-http-size. A hostile MCP server over HTTP answers a tools/call with a
 * never-ending JSON-RPC message (1 GiB announced), as a JSON body or as one server-sent event. The client reads at
 * most about one message cap of it, fails the call with McpServerError naming the limit, and drops the connection;
 * the server sees its socket closed long before it could send the gigabyte.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { McpServerError, UtcpClient } from './packed.js';

const GIB = 1024 ** 3;

interface Hostile {
  url: string;
  /** Bytes of the huge message the server managed to write before the client hung up. */
  sent(): number;
  /** Resolves when the huge response's socket closed. */
  hungUp: Promise<void>;
}

/** A hand-written streamable-HTTP MCP server: honest for initialize and tools/list, hostile on tools/call. */
async function hostileServer(mode: 'json' | 'sse'): Promise<Hostile> {
  let sent = 0;
  let hangUp!: () => void;
  const hungUp = new Promise<void>((r) => (hangUp = r));
  const sockets = new Set<Socket>();
  const reply = (res: ServerResponse, message: unknown) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => {
      const message = JSON.parse(text) as { id?: number; method: string; params?: { protocolVersion?: string } };
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      switch (message.method) {
        case 'initialize':
          return reply(res, {
            jsonrpc: '2.0',
            id: message.id,
            result: {
              protocolVersion: message.params?.protocolVersion,
              capabilities: { tools: {} },
              serverInfo: { name: 'hostile-http', version: '1.0.0' },
            },
          });
        case 'tools/list':
          return reply(res, {
            jsonrpc: '2.0',
            id: message.id,
            result: { tools: [{ name: 'work', inputSchema: { type: 'object', properties: {} } }] },
          });
        case 'tools/call': {
          // One JSON-RPC message of 1 GiB: a string that never ends, written as fast as the client reads.
          const head = `{"jsonrpc":"2.0","id":${message.id},"result":{"content":[{"type":"text","text":"`;
          if (mode === 'json')
            res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(GIB) });
          else res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(mode === 'json' ? head : `event: message\ndata: ${head}`);
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          const more = () => {
            while (sent < GIB && !res.destroyed) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once('drain', more);
            }
          };
          res.on('close', hangUp);
          more();
          return;
        }
        default:
          return reply(res, {
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32601, message: `Method not found: ${message.method}` },
          });
      }
    });
  });
  server.on('connection', (s) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  });
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/mcp`, sent: () => sent, hungUp };
}

describe('MCP over HTTP: per-message size cap', () => {
  for (const mode of ['json', 'sse'] as const) {
    it(`fails a call answered by a 1 GiB message (${mode}) with McpServerError and hangs up`, async () => {
      const server = await hostileServer(mode);
      const client = await UtcpClient.create({ limits: { max_response_bytes: 256 * 1024 } });
      onTestFinished(() => client.close());
      const r = await client.registerManual({
        name: 'h',
        call_template_type: 'mcp',
        config: { mcpServers: { s: { url: server.url, transport: 'http' } } },
      });
      expect(r.errors).toEqual([]);
      const heapBefore = process.memoryUsage().heapUsed;
      const error = await client.callTool('h.s.work', {}, { timeoutMs: 60_000 }).catch((e: unknown) => e);
      // As with stdio servers: the session is dropped and the call fails with McpServerError naming the bound.
      expect(error).toBeInstanceOf(McpServerError);
      expect((error as Error).message).toMatch(/larger than 1048576 bytes \(limits\.max_response_bytes\)/);
      await server.hungUp;
      // The client stopped reading at the cap: the server got nowhere near its gigabyte out (socket buffers aside).
      expect(server.sent()).toBeLessThan(64 * 1024 * 1024);
      expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(256 * 1024 * 1024);
    });
  }
});
