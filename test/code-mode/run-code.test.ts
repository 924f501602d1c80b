/** `runCode`: scripts calling tools in the QuickJS sandbox (docs/design/code-mode.md#sandbox). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { callToolChain, CodeModeError, runCode } from '../../src/code-mode/index.js';

async function clientWithTools(): Promise<UtcpClient> {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  const n = { type: 'number' } as const;
  await client.registerFunctions('fn', [
    {
      name: 'add',
      description: 'Adds two numbers.',
      inputs: { type: 'object', properties: { a: n, b: n }, required: ['a', 'b'], additionalProperties: false },
      handler: ({ a, b }) => (a as number) + (b as number),
    },
    {
      name: 'double',
      inputs: { type: 'object', properties: { x: n }, required: ['x'] },
      handler: ({ x }) => ({ value: (x as number) * 2 }),
    },
    {
      name: 'label',
      inputs: { type: 'object', properties: { value: n }, required: ['value'] },
      handler: ({ value }) => `#${value}`,
    },
    {
      name: 'fail',
      handler: () => {
        throw new Error('the service is down');
      },
    },
  ]);
  return client;
}

describe('runCode', () => {
  it('chains three tools and runs a loop of 20 calls, with the result, logs and calls returned', async () => {
    const client = await clientWithTools();
    const out = await runCode(
      client,
      `
      const sum: number = await fn.add({ a: 2, b: 3 });
      const doubled = await fn.double({ x: sum });
      const text = await fn.label({ value: doubled.value });
      console.log('chain', text, { sum });
      let total = 0;
      for (let i = 0; i < 20; i++) total = await fn.add({ a: total, b: i });
      console.warn('total', total);
      return { text, total };
      `,
    );
    expect(out.result).toEqual({ text: '#10', total: 190 });
    expect(out.logs).toEqual(['chain #10 {"sum":5}', '[warn] total 190']);
    expect(out.calls).toHaveLength(23);
    expect(out.calls.slice(0, 3).map((c) => c.tool)).toEqual(['fn.add', 'fn.double', 'fn.label']);
    expect(out.calls.every((c) => c.ok)).toBe(true);
  });

  it('makes a failing tool call an exception the script catches (validation failures too)', async () => {
    const client = await clientWithTools();
    const out = await runCode(
      client,
      `
      const seen = [];
      try { await fn.fail({}); } catch (e) { seen.push([e.name, e.code, e.tool, e.message]); }
      try { await fn.add({ a: 'one', b: 2 }); } catch (e) { seen.push([e.code, e.tool]); }
      return seen;
      `,
    );
    expect(out.result).toEqual([
      ['ToolExecutionError', 'TOOL_ERROR', 'fn.fail', expect.stringContaining('the service is down')],
      ['INVALID_ARGUMENTS', 'fn.add'],
    ]);
    expect(out.calls.map((c) => c.ok)).toEqual([false, false]);
  });

  it('an uncaught error, a syntax error and a never-settling promise end in typed errors with the logs so far', async () => {
    const client = await clientWithTools();
    const thrown = await runCode(client, 'console.log("before"); await fn.fail({});').catch((e) => e);
    expect(thrown).toBeInstanceOf(CodeModeError);
    expect(thrown).toMatchObject({ code: 'TOOL_ERROR', logs: ['before'] });
    expect(thrown.message).toContain('the service is down');
    await expect(runCode(client, 'return {')).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    await expect(runCode(client, 'await new Promise(() => {});')).rejects.toMatchObject({ code: 'TOOL_ERROR' });
  });

  it('stops an infinite loop at the deadline with a TIMEOUT error, and the host stays responsive', async () => {
    const client = await clientWithTools();
    const server = createServer((_req, res) => res.end('alive'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    const started = performance.now();
    const error = await runCode(client, 'let i = 0; while (true) { i++; }', { timeoutMs: 300 }).catch((e) => e);
    expect(error).toBeInstanceOf(CodeModeError);
    expect(error.code).toBe('TIMEOUT');
    expect(performance.now() - started).toBeLessThan(8000);
    const { port } = server.address() as AddressInfo;
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('alive');
    // The engine is usable again at once.
    expect((await runCode(client, 'return await fn.add({ a: 1, b: 1 })')).result).toBe(2);
  }, 20_000);

  it('a deadline also stops a script waiting on a slow tool, and aborts that call', async () => {
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    let started = false;
    let aborted = false;
    await client.registerFunctions('slow', [
      {
        name: 'wait',
        handler: (_args, { signal }) =>
          new Promise((resolve) => {
            started = true;
            signal.addEventListener('abort', () => {
              aborted = true;
              resolve('late');
            });
          }),
      },
    ]);
    // The deadline must leave the worker time to start and reach the call (about 0.1 s; 30x that on a loaded
    // machine), so that it is the waiting call the deadline stops.
    await expect(runCode(client, 'return await slow.wait({})', { timeoutMs: 3000 })).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
    expect(started).toBe(true);
    await expect.poll(() => aborted).toBe(true);
  });

  it('a 1 GB allocation, a growing heap and deep recursion end in LIMIT_EXCEEDED', async () => {
    const client = await clientWithTools();
    for (const bomb of [
      "const s = 'x'.repeat(2 ** 30 - 1); return s.length;",
      'return new ArrayBuffer(2 ** 30).byteLength;',
      'const a = []; for (;;) a.push({ i: a.length, s: `k${a.length}` });',
      'function f(n) { return f(n + 1) + 1; } return f(0);',
    ]) {
      const error = await runCode(client, bomb, { memoryLimitMb: 16, timeoutMs: 30_000 }).catch((e) => e);
      expect(error, bomb).toBeInstanceOf(CodeModeError);
      expect(error.code, bomb).toBe('LIMIT_EXCEEDED');
    }
    expect((await runCode(client, 'return 1 + 1')).result).toBe(2);
  }, 120_000);

  it('reaches no ambient authority: every host global is absent and modules do not load', async () => {
    const client = await clientWithTools();
    const globals = [
      'process',
      'require',
      'module',
      'exports',
      'fetch',
      'XMLHttpRequest',
      'WebSocket',
      'setTimeout',
      'setInterval',
      'setImmediate',
      'queueMicrotask',
      'Buffer',
      'global',
      'Deno',
      'Bun',
      'std',
      'os',
      'WebAssembly',
      'Worker',
      'importScripts',
      '__utcp_call',
      '__utcp_log',
    ];
    const out = await runCode(client, `return ${JSON.stringify(globals)}.map((g) => [g, typeof globalThis[g]]);`);
    expect(out.result).toEqual(globals.map((g) => [g, 'undefined']));
    const escapes = await runCode(
      client,
      `
      const tries = [];
      try { await import('node:fs'); tries.push('import loaded'); } catch (e) { tries.push(String(e.name)); }
      try { const P = (0, fn.add).constructor; const f = new P('return typeof process')(); tries.push(await f); } catch (e) { tries.push('ctor ' + e.name); }
      try { tries.push(typeof Function('return this')().process); } catch (e) { tries.push('fn ' + e.name); }
      return tries;
      `,
    );
    expect(escapes.result).toEqual(['ReferenceError', 'undefined', 'undefined']);
    await expect(runCode(client, "import fs from 'node:fs';")).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });

  it('calls only the selected tools, and refuses calls the gate refuses', async () => {
    const client = await clientWithTools();
    const selected = await runCode(
      client,
      'try { await fn.fail({}); } catch (e) { return [typeof fn.fail, await fn.add({ a: 1, b: 2 })]; }',
      { tools: ['fn.add'] },
    );
    expect(selected.result).toEqual(['undefined', 3]);
    const gated = await runCode(
      client,
      'const r = []; for (const x of [1, 2]) { try { r.push(await fn.double({ x })); } catch (e) { r.push(e.message); } } return r;',
      {
        callGate: ({ args }) => {
          if (args.x === 2) throw new Error('not allowed');
          return { x: 10 };
        },
      },
    );
    expect(gated.result).toEqual([{ value: 20 }, 'not allowed']);
  });

  it('refuses calls past maxCalls with a catchable LIMIT_EXCEEDED error', async () => {
    const client = await clientWithTools();
    const out = await runCode(
      client,
      'let n = 0; for (let i = 0; i < 5; i++) { try { await fn.add({ a: i, b: 0 }); n++; } catch (e) { return [n, e.code]; } }',
      { maxCalls: 3 },
    );
    expect(out.result).toEqual([3, 'LIMIT_EXCEEDED']);
    expect(out.calls).toHaveLength(3);
  });

  it('stops at its signal with ABORTED', async () => {
    const client = await clientWithTools();
    const controller = new AbortController();
    controller.abort();
    await expect(runCode(client, 'return 1', { signal: controller.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
  });

  it('callToolChain keeps the official argument order (code, timeout)', async () => {
    const client = await clientWithTools();
    const out = await callToolChain(client, 'console.log("hi"); return await fn.add({ a: 4, b: 5 });', 5000);
    expect(out).toMatchObject({ result: 9, logs: ['hi'] });
  });

  it('rejects bad options with typed errors', async () => {
    const client = await clientWithTools();
    await expect(runCode(client, '')).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
    await expect(runCode(client, 'return 1', { timeoutMs: -1 })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
    });
  });
});
