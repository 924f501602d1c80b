/**
 * docs/design/transports.md#timeout-units: a millisecond `timeout` below 1000 is read as seconds, so manuals written
 * by the official converter (`timeout: 30`) work. The manual here is produced by the official `@utcp/http` converter.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenApiConverter } from '@utcp/http';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { normalizeCallTemplate } from '../../src/core/legacy.js';
import { TemplateRegistry } from '../../src/core/template-registry.js';
import { builtinTransports } from '../../src/transports/builtin.js';

// The rule is part of each millisecond-timeout transport's legacy hook (its template spec).
const hooks = new TemplateRegistry(builtinTransports);
await Promise.all(hooks.types.map((type) => hooks.load(type)));

it('reads a sub-1000 timeout as seconds, with one warning per manual and a logger warning', async () => {
  // Answers after 150 ms: longer than 30 ms, far shorter than 30 s.
  const server = createServer((req, res) => {
    req.resume();
    const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), 150);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const spec = {
    openapi: '3.0.3',
    info: { title: 'slow', version: '1' },
    servers: [{ url: base }],
    paths: {
      '/a': { get: { operationId: 'slowA', responses: { 200: { description: 'ok' } } } },
      '/b': { get: { operationId: 'slowB', responses: { 200: { description: 'ok' } } } },
    },
  };
  const manual = new OpenApiConverter(spec, { callTemplateName: 'slow' }).convert();
  expect((manual.tools[0].tool_call_template as { timeout?: number }).timeout).toBe(30);

  const logged: string[] = [];
  const logger = {
    debug() {},
    info() {},
    warn: (...a: unknown[]) => logged.push(a.filter((x) => typeof x === 'string').join(' ')),
    error() {},
  };
  const client = await UtcpClient.create({}, { logger });
  onTestFinished(() => client.close());
  const r = await client.registerManual({
    name: 'slow',
    call_template_type: 'text',
    content: JSON.stringify(manual),
    allowed_communication_protocols: ['http'],
  });
  expect(r.success).toBe(true);
  expect(r.warnings.filter((w) => w.includes('read as seconds'))).toEqual([
    expect.stringMatching(/^2 tool templates: timeout below 1000 read as seconds/),
  ]);
  expect(logged.some((m) => m.includes('read as seconds'))).toBe(true);
  expect(await client.callTool('slow.slowA', {})).toEqual({ ok: true });
});

it('leaves millisecond values of 1000 and more, every template but http, and timeout_ms alone', () => {
  const read = (template: Record<string, unknown>, notes: string[] = []) =>
    (normalizeCallTemplate(template, notes, 'manual call template', hooks) as { timeout: number }).timeout;
  expect(read({ call_template_type: 'http', url: 'http://x', timeout: 1500 })).toBe(1500);
  // Milliseconds are normal in these: a UDP or TCP manual asking for 300 ms must not wait 5 minutes.
  const notes: string[] = [];
  expect(read({ call_template_type: 'udp', host: 'h', port: 1, timeout: 300 }, notes)).toBe(300);
  expect(read({ call_template_type: 'tcp', host: 'h', port: 1, timeout: 300 }, notes)).toBe(300);
  expect(read({ call_template_type: 'tcp', host: 'h', port: 1, timeout_ms: 50 }, notes)).toBe(50);
  expect(read({ call_template_type: 'cli', commands: [], timeout: 5 }, notes)).toBe(5);
  expect(read({ call_template_type: 'graphql', url: 'http://x', timeout: 2 }, notes)).toBe(2);
  expect(
    read({ call_template_type: 'grpc', host: 'h', port: 1, service_name: 's', method_name: 'm', timeout: 250 }, notes),
  ).toBe(250);
  expect(read({ call_template_type: 'sse', url: 'http://x', timeout: 500 }, notes)).toBe(500);
  expect(read({ call_template_type: 'streamable_http', url: 'http://x', timeout: 500 }, notes)).toBe(500);
  expect(read({ call_template_type: 'websocket', url: 'ws://x', timeout: 5 }, notes)).toBe(5);
  expect(notes).toEqual([]);
  // The official converter's HTTP tools write seconds: only there is a small value read as seconds.
  expect(read({ call_template_type: 'http', url: 'http://x', timeout: 2 }, notes)).toBe(2000);
  expect(notes).toEqual([
    'manual call template: timeout below 1000 read as seconds (2 → 2000 ms); write milliseconds to silence this',
  ]);
});

it('a UDP tool asking for 300 ms times out after about that, not after 300 s', async () => {
  const { createSocket } = await import('node:dgram');
  const silent = createSocket('udp4');
  await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => silent.close(() => resolve())));
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const manual = {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'ping',
        description: 'never answered',
        inputs: { type: 'object' },
        tool_call_template: { call_template_type: 'udp', host: '127.0.0.1', port: silent.address().port, timeout: 300 },
      },
    ],
  };
  const r = await client.registerManual({
    name: 'u',
    call_template_type: 'text',
    content: JSON.stringify(manual),
    allowed_communication_protocols: ['udp'],
  });
  expect(r.warnings.filter((w) => w.includes('read as seconds'))).toEqual([]);
  const started = Date.now();
  // The test's own deadline is well under the 300 s the old reading would wait.
  await expect(client.callTool('u.ping', {}, { timeoutMs: 15_000 })).rejects.toMatchObject({ code: 'TIMEOUT' });
  expect(Date.now() - started).toBeLessThan(12_000);
}, 30_000);
