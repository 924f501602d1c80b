/**
 * Tool calls that ride out flaky servers (docs/design/resilience.md): retries, Retry-After, the per-origin circuit
 * breaker and the per-manual concurrency limit, against local servers on 127.0.0.1.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  CircuitOpenError,
  HttpStatusError,
  UtcpClient,
  UtcpValidationError,
  type ResilienceConfig,
  type UtcpClient as Client,
} from '../../src/index.js';
import { retryAfterMs } from '../../src/http/http-retry.js';
import { json, startServer, type Handler, type TestServer } from '../fixtures/http/server.js';

const CHANNEL = 'utcp-kit:tool:retry';

async function server(handler: Handler): Promise<TestServer> {
  const s = await startServer(handler);
  onTestFinished(() => s.close());
  return s;
}

interface Logged {
  fields: Record<string, unknown>;
  message: string;
}

async function client(resilience?: ResilienceConfig, options: { timeoutMs?: number } = {}) {
  const warnings: Logged[] = [];
  const logger = {
    warn: (fields: unknown, message?: unknown) => {
      if (typeof fields === 'object' && fields !== null)
        warnings.push({ fields: fields as Record<string, unknown>, message: String(message ?? '') });
    },
  };
  const c = await UtcpClient.create(resilience ? { resilience } : {}, { logger, timeoutMs: options.timeoutMs });
  onTestFinished(() => c.close());
  return { c, warnings };
}

/** Registers manual `demo` with one tool `t` calling `url` with `method` (plus template extras). */
async function register(
  c: Client,
  url: string,
  method: string,
  extra: Record<string, unknown> = {},
  manualExtra: Record<string, unknown> = {},
): Promise<void> {
  const manual = {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 't',
        inputs: { type: 'object', properties: { body: {} } },
        tool_call_template: { call_template_type: 'http', url, http_method: method, ...extra },
      },
    ],
  };
  const result = await c.registerManual({
    name: 'demo',
    call_template_type: 'text',
    content: JSON.stringify(manual),
    allowed_communication_protocols: ['http'],
    ...manualExtra,
  } as never);
  expect(result.errors).toEqual([]);
}

/** Collects the events published on `utcp-kit:tool:retry` during the test. */
function retryEvents(onEvent?: (event: Record<string, unknown>) => void): Array<Record<string, unknown>> {
  const events: Array<Record<string, unknown>> = [];
  const listener = (message: unknown) => {
    events.push(message as Record<string, unknown>);
    onEvent?.(message as Record<string, unknown>);
  };
  subscribe(CHANNEL, listener);
  onTestFinished(() => {
    unsubscribe(CHANNEL, listener);
  });
  return events;
}

/** A port nothing listens on (a server bound it and closed). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

describe('retries of http tool calls', () => {
  it('waits for Retry-After after a 503 and then succeeds, reporting the retry to the logger and the channel', async () => {
    let calls = 0;
    const s = await server((_req, res) => {
      calls++;
      if (calls === 1) {
        res.writeHead(503, { 'retry-after': '1' });
        return void res.end('busy');
      }
      json(res, { ok: true });
    });
    const { c, warnings } = await client();
    await register(c, `${s.url}/get?token=not-logged`, 'GET');
    const events = retryEvents();
    const started = performance.now();
    await expect(c.callTool('demo.t', {})).resolves.toEqual({ ok: true });
    const elapsed = performance.now() - started;
    expect(s.requests).toHaveLength(2);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(10_000);
    expect(events).toEqual([
      { tool: 'demo.t', manual: 'demo', attempt: 1, delayMs: 1000, reason: 'status 503 (Retry-After)' },
    ]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].fields).toEqual(events[0]);
    expect(JSON.stringify(warnings)).not.toContain('not-logged');
  });

  it('retries 429, 502 and 504 up to the configured count, then throws the last status', async () => {
    const statuses = [429, 502, 504];
    const s = await server((_req, res) => {
      res.writeHead(statuses[Math.min(s.requests.length - 1, 2)], { 'retry-after': '0' });
      res.end();
    });
    const { c } = await client({ retries: 2 });
    await register(c, `${s.url}/x`, 'DELETE');
    const events = retryEvents();
    const error = await c.callTool('demo.t', {}).catch((e) => e);
    expect(error).toBeInstanceOf(HttpStatusError);
    expect((error as HttpStatusError).status).toBe(504);
    expect(s.requests).toHaveLength(3);
    expect(events.map((e) => e.reason)).toEqual(['status 429 (Retry-After)', 'status 502 (Retry-After)']);
  });

  it('never retries a POST', async () => {
    const s = await server((_req, res) => {
      res.writeHead(503, { 'retry-after': '0' });
      res.end();
    });
    const { c } = await client();
    await register(c, `${s.url}/post`, 'POST');
    const events = retryEvents();
    await expect(c.callTool('demo.t', { body: { a: 1 } })).rejects.toMatchObject({ code: 'HTTP_STATUS', status: 503 });
    expect(s.requests).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it('retries a POST whose template says idempotent: true, sending the same body again', async () => {
    const s = await server((_req, res) => {
      if (s.requests.length === 1) {
        res.writeHead(503, { 'retry-after': '0' });
        return void res.end();
      }
      json(res, { done: true });
    });
    const { c } = await client();
    await register(c, `${s.url}/post`, 'POST', { idempotent: true });
    await expect(c.callTool('demo.t', { body: { a: 1 } })).resolves.toEqual({ done: true });
    expect(s.requests.map((r) => [r.method, r.body])).toEqual([
      ['POST', '{"a":1}'],
      ['POST', '{"a":1}'],
    ]);
  });

  it('retries a connection refused before any response', async () => {
    const port = await freePort();
    let listening: Server | undefined;
    onTestFinished(() => new Promise<void>((r) => (listening ? listening.close(() => r()) : r())));
    // The server comes up when the first retry is announced (binding an IP address takes one tick, the backoff more).
    const events = retryEvents(() => {
      listening ??= createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"up":true}');
      }).listen(port, '127.0.0.1');
    });
    const { c } = await client({ retries: 5 });
    await register(c, `http://127.0.0.1:${port}/get`, 'GET');
    await expect(c.callTool('demo.t', {})).resolves.toEqual({ up: true });
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(events[0]).toMatchObject({ tool: 'demo.t', manual: 'demo', attempt: 1, reason: 'connection ECONNREFUSED' });
  });

  it('retries a connection closed before the status line, but not one that breaks off after it', async () => {
    const s = await server((req, res) => {
      if (req.url === '/drop' && s.requests.filter((r) => r.url === '/drop').length === 1) {
        req.socket.destroy();
        return;
      }
      if (req.url === '/cut') {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
        res.write('{"partial":', () => res.socket?.destroy());
        return;
      }
      json(res, { whole: true });
    });
    const { c } = await client();
    await register(c, `${s.url}/drop`, 'GET');
    await expect(c.callTool('demo.t', {})).resolves.toEqual({ whole: true });
    expect(s.requests).toHaveLength(2);
    await c.deregisterManual('demo');
    await register(c, `${s.url}/cut`, 'GET');
    const events = retryEvents();
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect(s.requests.filter((r) => r.url === '/cut')).toHaveLength(1);
    expect(events).toEqual([]);
  });

  it('does not retry with retries: 0, and a template resilience block overrides the client', async () => {
    const s = await server((_req, res) => {
      res.writeHead(503, { 'retry-after': '0' });
      res.end();
    });
    const { c } = await client({ retries: 0 });
    await register(c, `${s.url}/a`, 'GET');
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ status: 503 });
    expect(s.requests).toHaveLength(1);
    await c.deregisterManual('demo');
    await register(c, `${s.url}/b`, 'GET', { resilience: { retries: 1 } });
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ status: 503 });
    expect(s.requests).toHaveLength(3);
  });

  it('an abort during the backoff sleep ends the call at once', async () => {
    const s = await server((_req, res) => {
      res.writeHead(503, { 'retry-after': '8' });
      res.end();
    });
    const { c } = await client();
    await register(c, `${s.url}/get`, 'GET');
    const controller = new AbortController();
    retryEvents(() => controller.abort());
    const started = performance.now();
    await expect(c.callTool('demo.t', {}, { signal: controller.signal })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(performance.now() - started).toBeLessThan(5000);
    expect(s.requests).toHaveLength(1);
  });

  it('never sleeps past the deadline: a Retry-After beyond it fails the call with the server answer at once', async () => {
    const s = await server((_req, res) => {
      res.writeHead(503, { 'retry-after': '30' });
      res.end();
    });
    const { c } = await client(undefined, { timeoutMs: 5000 });
    await register(c, `${s.url}/get`, 'GET');
    const events = retryEvents();
    const started = performance.now();
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ code: 'HTTP_STATUS', status: 503 });
    expect(performance.now() - started).toBeLessThan(4000);
    expect(events).toEqual([]);
  });

  it('reads Retry-After as seconds or as an HTTP-date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs({ 'retry-after': '3' }, now)).toBe(3000);
    expect(retryAfterMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }, now)).toBe(5000);
    expect(retryAfterMs({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(retryAfterMs({}, now)).toBeUndefined();
  });
});

describe('circuit breaker', () => {
  it('opens after N consecutive failures, fails fast naming the origin, and closes after a successful probe', async () => {
    let down = true;
    const s = await server((_req, res) => {
      if (down) {
        res.writeHead(500);
        return void res.end('down');
      }
      json(res, { up: true });
    });
    const { c } = await client({ retries: 0, circuit_breaker: { failure_threshold: 2, open_ms: 400 } });
    await register(c, `${s.url}/get`, 'GET');
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ status: 500 });
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ status: 500 });
    const open = (await c.callTool('demo.t', {}).catch((e) => e)) as CircuitOpenError;
    expect(open).toBeInstanceOf(CircuitOpenError);
    expect(open).toMatchObject({ code: 'CIRCUIT_OPEN', origin: s.url });
    expect(open.message).toContain(s.url);
    expect(open.message).toContain(open.probeAt.toISOString());
    expect(s.requests).toHaveLength(2);

    // Another client is not affected: breakers are per client.
    const other = await client({ retries: 0 });
    await register(other.c, `${s.url}/get`, 'GET');
    await expect(other.c.callTool('demo.t', {})).rejects.toMatchObject({ status: 500 });
    expect(s.requests).toHaveLength(3);

    // The probe after open_ms fails: open again.
    await new Promise((r) => setTimeout(r, open.probeAt.getTime() - Date.now() + 20));
    await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ status: 500 });
    expect(s.requests).toHaveLength(4);
    const again = (await c.callTool('demo.t', {}).catch((e) => e)) as CircuitOpenError;
    expect(again).toMatchObject({ code: 'CIRCUIT_OPEN' });
    expect(s.requests).toHaveLength(4);

    // The next probe succeeds: closed, calls pass again.
    down = false;
    await new Promise((r) => setTimeout(r, again.probeAt.getTime() - Date.now() + 20));
    await expect(c.callTool('demo.t', {})).resolves.toEqual({ up: true });
    await expect(c.callTool('demo.t', {})).resolves.toEqual({ up: true });
    expect(s.requests).toHaveLength(6);
  });

  it('is off by default', async () => {
    const s = await server((_req, res) => {
      res.writeHead(500);
      res.end();
    });
    const { c } = await client({ retries: 0 });
    await register(c, `${s.url}/get`, 'GET');
    for (let i = 0; i < 8; i++) await expect(c.callTool('demo.t', {})).rejects.toMatchObject({ status: 500 });
    expect(s.requests).toHaveLength(8);
  });
});

describe('per-manual concurrency limit', () => {
  it('never runs more than max_concurrency calls of a manual at once; the rest queue and complete', async () => {
    let current = 0;
    let peak = 0;
    const s = await server(async (_req, res) => {
      current++;
      peak = Math.max(peak, current);
      await new Promise((r) => setTimeout(r, 40));
      current--;
      json(res, { ok: true });
    });
    const { c } = await client();
    // The manual template overrides the client (which sets no limit).
    await register(c, `${s.url}/slow`, 'GET', {}, { resilience: { max_concurrency: 2 } });
    const results = await Promise.all(Array.from({ length: 6 }, () => c.callTool('demo.t', {})));
    expect(results).toEqual(Array(6).fill({ ok: true }));
    expect(s.requests).toHaveLength(6);
    expect(peak).toBe(2);
  });

  it('a queued call honours its abort signal and its deadline while it waits', async () => {
    const gate: Array<() => void> = [];
    const s = await server(async (_req, res) => {
      await new Promise<void>((r) => gate.push(r));
      json(res, { ok: true });
    });
    const { c } = await client({ max_concurrency: 1 });
    await register(c, `${s.url}/hold`, 'GET');
    const first = c.callTool('demo.t', {});
    const controller = new AbortController();
    const queued = c.callTool('demo.t', {}, { signal: controller.signal });
    const timed = c.callTool('demo.t', {}, { timeoutMs: 100 });
    await expect(timed).rejects.toMatchObject({ code: 'TIMEOUT' });
    controller.abort();
    await expect(queued).rejects.toMatchObject({ code: 'ABORTED' });
    expect(s.requests).toHaveLength(1);
    gate.shift()?.();
    await expect(first).resolves.toEqual({ ok: true });
    // The slot is free again.
    const next = c.callTool('demo.t', {});
    await new Promise<void>((r) => {
      const wait = () => (gate.length > 0 ? r() : setTimeout(wait, 5));
      wait();
    });
    gate.shift()?.();
    await expect(next).resolves.toEqual({ ok: true });
  });
});

describe('resilience config validation', () => {
  it('rejects a bad client config field with INVALID_CONFIG naming it', async () => {
    const error = await UtcpClient.create({ resilience: { retries: -1 } } as never).catch((e) => e);
    expect(error).toBeInstanceOf(UtcpValidationError);
    expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(error.message).toContain('resilience.retries');
    const breaker = await UtcpClient.create({
      resilience: { circuit_breaker: { failure_threshold: 0, open_msec: 5 } },
    } as never).catch((e) => e);
    expect(breaker.message).toContain('resilience.circuit_breaker.failure_threshold');
    expect(breaker.message).toContain('resilience.circuit_breaker.open_msec');
  });

  it('rejects bad client options and bad template blocks, naming the field', async () => {
    const error = await UtcpClient.create({}, { resilience: { max_concurrency: 0 } }).catch((e) => e);
    expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(error.message).toContain('resilience.max_concurrency');
    const { c } = await client();
    const result = await c.registerManual({
      name: 'bad',
      call_template_type: 'text',
      content: '{"tools":[]}',
      resilience: { retries: 'many' },
    } as never);
    expect(result.success).toBe(false);
    expect(result.errors.join(' ')).toContain('resilience.retries');
    // A tool with a bad block is left out, with a warning naming the field.
    const tools = {
      tools: [
        { name: 'ok', tool_call_template: { call_template_type: 'http', url: 'http://127.0.0.1:9/a' } },
        {
          name: 'bad',
          tool_call_template: {
            call_template_type: 'http',
            url: 'http://127.0.0.1:9/b',
            resilience: { circuit_breaker: { open_ms: -1 } },
          },
        },
      ],
    };
    const partial = await c.registerManual({
      name: 'partial',
      call_template_type: 'text',
      content: JSON.stringify(tools),
      allowed_communication_protocols: ['http'],
    } as never);
    expect(partial.manual.tools.map((t) => t.name)).toEqual(['partial.ok']);
    expect(partial.warnings.join(' ')).toContain('resilience.circuit_breaker.open_ms');
  });
});
