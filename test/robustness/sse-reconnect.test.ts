/**
 * An SSE GET stream that keeps reconnecting (the server drops every connection after one event) must
 * not pile up abort listeners on the call's signal: before the fix each reconnect linked one more
 * deadline, and past ten Node printed a MaxListenersExceededWarning on the host's stderr.
 */
import { afterEach, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { startServer, type TestServer } from '../fixtures/http/server.js';

let http: TestServer | undefined;
let client: UtcpClient | undefined;
afterEach(async () => {
  await client?.close();
  await http?.close();
});

it('reconnects many times without leaking listeners on the call signal', async () => {
  const DROPS = 15;
  let connections = 0;
  http = await startServer((_req, res) => {
    const n = connections++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (n === DROPS) return void res.end(`id: ${n}\ndata: ${n}\n\n`);
    // One event with a 1 ms retry, then a reset: the client reconnects with Last-Event-ID.
    res.write(`retry: 1\nid: ${n}\ndata: ${n}\n\n`, () => setImmediate(() => res.socket?.resetAndDestroy()));
  });
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  try {
    client = await UtcpClient.create();
    const tools = [
      {
        name: 'ticks',
        description: '',
        inputs: {},
        outputs: {},
        tags: [],
        tool_call_template: { call_template_type: 'sse', url: `${http.url}/ticks` },
      },
    ];
    const r = await client.registerManual({
      name: 'r',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['sse'],
    });
    expect(r.errors).toEqual([]);
    const items = await client.callTool('r.ticks', {});
    expect(items).toEqual(Array.from({ length: DROPS + 1 }, (_, i) => i));
    expect(http.requests.at(-1)?.headers['last-event-id']).toBe(String(DROPS - 1));
    // Warnings are emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve));
  } finally {
    process.off('warning', onWarning);
  }
  expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
});
