/**
 * The mcp transport against the reference server from npm, @modelcontextprotocol/server-everything,
 * over stdio and over streamable HTTP. One server process per protocol for the whole file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProgressEvent } from '../../src/core/transport.js';
import type { McpCallTemplate } from '../../src/index.js';
import {
  EVERYTHING_ENTRY,
  createHarness,
  mcpTemplate,
  measureExitAfterClose,
  toolNames,
  type Harness,
} from '../fixtures/mcp/harness.js';

describe('mcp with server-everything over stdio', () => {
  let h: Harness;
  let t: McpCallTemplate;
  let names: string[];

  beforeAll(async () => {
    // Set before the server starts: the child must not inherit it.
    process.env.UTCP_TEST_SECRET = 'must-not-leak';
    h = createHarness();
    t = mcpTemplate(
      'ev',
      { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } },
      { register_resources_as_tools: true },
    );
    names = toolNames(await h.register(t));
  });

  afterAll(async () => {
    delete process.env.UTCP_TEST_SECRET;
    await h?.close();
  });

  it('lists its tools and resources', () => {
    expect(names).toEqual(
      expect.arrayContaining([
        'everything.echo',
        'everything.get-sum',
        'everything.trigger-long-running-operation',
        'everything.get-structured-content',
      ]),
    );
    expect(names.some((n) => n.startsWith('everything.resource_'))).toBe(true);
  });

  it('calls echo and get-sum', async () => {
    expect(await h.call(t, 'everything.echo', { message: 'hello' })).toBe('Echo: hello');
    expect(await h.call(t, 'everything.get-sum', { a: 2, b: 40 })).toBe('The sum of 2 and 40 is 42.');
  });

  it('returns structured content as an object', async () => {
    expect(await h.call(t, 'everything.get-structured-content', { location: 'New York' })).toEqual({
      temperature: 33,
      conditions: 'Cloudy',
      humidity: 82,
    });
  });

  it('returns image content items unchanged', async () => {
    const result = (await h.call(t, 'everything.get-tiny-image')) as Array<{ type: string }>;
    expect(result.some((item) => item.type === 'image')).toBe(true);
  });

  it('delivers progress notifications of the long-running operation', async () => {
    const events: ProgressEvent[] = [];
    const result = await h.call(
      t,
      'everything.trigger-long-running-operation',
      { duration: 0.4, steps: 4 },
      { onProgress: (e) => events.push(e) },
    );
    expect(result).toBe('Long running operation completed. Duration: 0.4 seconds, Steps: 4.');
    // The server may send its last notification after the result; the first ones arrive before it.
    expect(events.length).toBeGreaterThanOrEqual(3);
    expect(events[0]).toMatchObject({ progress: 1, total: 4 });
  });

  it('cancels a long call promptly and keeps the session usable', async () => {
    const controller = new AbortController();
    let abortedAt = 0;
    const call = h.call(
      t,
      'everything.trigger-long-running-operation',
      { duration: 30, steps: 60 },
      {
        signal: controller.signal,
        onProgress: () => {
          if (abortedAt) return;
          abortedAt = Date.now();
          controller.abort();
        },
      },
    );
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(await h.call(t, 'everything.echo', { message: 'still here' })).toBe('Echo: still here');
  });

  it('reads a resource through its resource tool', async () => {
    const name = names.find((n) => n.startsWith('everything.resource_'))!;
    const result = (await h.call(t, name)) as { contents: Array<{ uri: string; text?: string }> };
    expect(result.contents.length).toBeGreaterThan(0);
    expect(result.contents[0].uri).toMatch(/^demo:\/\//);
  });

  it('does not pass host secrets to the server', async () => {
    const env = (await h.call(t, 'everything.get-env')) as Record<string, string>;
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.UTCP_TEST_SECRET).toBeUndefined();
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** Starts server-everything over streamable HTTP; resolves once it listens (or rejects when it exits first). */
async function startEverythingHttp(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_ENTRY, 'streamableHttp'], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (text: string) => {
      err += text;
      if (err.includes(`listening on port ${port}`)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}: ${err}`)));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

describe('mcp with server-everything over streamable HTTP', () => {
  let server: { url: string; child: ChildProcess };
  let h: Harness;

  beforeAll(async () => {
    server = await startEverythingHttp();
    h = createHarness();
  });

  afterAll(async () => {
    await h?.close();
    if (server?.child.exitCode === null) {
      const exited = new Promise((resolve) => server.child.once('exit', resolve));
      server.child.kill();
      await exited;
    }
  });

  it('lists tools and calls echo', async () => {
    const t = mcpTemplate('evh', { everything: { url: server.url } });
    expect(toolNames(await h.register(t))).toContain('everything.echo');
    expect(await h.call(t, 'everything.echo', { message: 'over http' })).toBe('Echo: over http');
  });

  it('delivers progress notifications over HTTP', async () => {
    const t = mcpTemplate('evh', { everything: { url: server.url } });
    const events: ProgressEvent[] = [];
    await h.call(
      t,
      'everything.trigger-long-running-operation',
      { duration: 0.3, steps: 3 },
      { onProgress: (e) => events.push(e) },
    );
    expect(events.length).toBeGreaterThanOrEqual(2);
  });

  it('lets a process exit right after close() with an HTTP session open', async () => {
    const run = await measureExitAfterClose([server.url]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.output).toMatchObject({ echo: 'Echo: bye' });
    expect(run.exitMs, `exited ${run.exitMs} ms after close()`).toBeLessThan(5000);
  }, 30_000);
});
