/**
 * The engine runs in a worker thread, so a CPU-bound script never blocks the host's event loop
 * (docs/design/code-mode.md#worker). From the sources the run uses the built worker: `npm run build` first.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { runCode } from '../../src/code-mode/index.js';

it('keeps the host responsive while a script spins, and stops it at its signal with ABORTED', async () => {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  let running: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    running = resolve;
  });
  await client.registerFunctions('probe', [{ name: 'running', handler: () => (running(), true) }]);
  const server = createServer((_req, res) => res.end('alive'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
  const { port } = server.address() as AddressInfo;

  const controller = new AbortController();
  onTestFinished(() => controller.abort());
  const run = runCode(client, 'await probe.running({}); let i = 0; while (true) { i++; }', {
    timeoutMs: 20_000,
    signal: controller.signal,
  }).catch((e: unknown) => e);
  await started;

  // The script now spins in its engine; the host still answers a request within a few milliseconds
  // (bound: 5 s, against a 20 s deadline that a blocked loop would have to wait out).
  const asked = performance.now();
  const body = await (await fetch(`http://127.0.0.1:${port}/`)).text();
  expect(body).toBe('alive');
  expect(performance.now() - asked).toBeLessThan(5000);

  const aborting = performance.now();
  controller.abort();
  const error = (await run) as { name?: string; code?: string };
  expect(error).toMatchObject({ name: 'CodeModeError', code: 'ABORTED' });
  expect(performance.now() - aborting).toBeLessThan(5000);
}, 30_000);

it('terminates an engine stuck where its interrupt handler never runs, a short grace after the deadline', async () => {
  const client = { getTools: async () => [], callTool: async () => null } as unknown as Parameters<typeof runCode>[0];
  // A substring search inside the engine's C code checks no interrupt: ~20 s of work on this machine.
  const stuck = "const s = 'a'.repeat(2 ** 22); return s.indexOf('a'.repeat(4096) + 'b');";
  const started = performance.now();
  const error = await runCode(client, stuck, { timeoutMs: 300 }).catch((e: unknown) => e);
  expect(error).toMatchObject({ name: 'CodeModeError', code: 'TIMEOUT' });
  // Expected: the 300 ms deadline and the 250 ms grace (docs/design/code-mode.md#worker).
  expect(performance.now() - started).toBeLessThan(6000);
}, 40_000);
