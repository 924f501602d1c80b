/**
 * Exit after close, every transport at once: a child process starts a local server of every kind,
 * registers one manual per transport (http, sse, streamable_http, websocket, tcp, udp, graphql with a
 * subscription, grpc, mcp over stdio, cli), calls a tool of each, closes the client and its servers,
 * and must then exit on its own with code 0, promptly. A socket, child process or timer left behind
 * by any transport keeps it alive and fails this test (the child is killed after a bound, and rerun
 * with diagnostics listing the live handles).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../fixtures/robustness/exit-after-close.ts', import.meta.url));
const IN_FLIGHT_SCRIPT = fileURLToPath(new URL('../fixtures/robustness/close-in-flight.ts', import.meta.url));
/** Bound on the whole run (startup of tsx, ten servers, MCP server-everything); the child is killed after it. */
const RUN_BOUND_MS = 40_000;
/** How long the process may take to exit once it printed its result line (client and servers closed). */
const EXIT_BOUND_MS = 1_000;
/** How long close() may take to settle every in-flight call (MCP gives its server 500 ms to exit after stdin closes). */
const SETTLE_BOUND_MS = 3_000;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Milliseconds between the result line (everything closed) and the exit. */
  exitAfterCloseMs: number | undefined;
}

function runChild(script: string, diagnostics: boolean): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...(diagnostics ? { EXIT_DIAGNOSTICS: '1' } : {}) },
    });
    let stdout = '';
    let stderr = '';
    let closedAt: number | undefined;
    let exitBound: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (closedAt === undefined && stdout.includes('\n')) {
        closedAt = Date.now();
        exitBound = setTimeout(() => child.kill('SIGKILL'), diagnostics ? 2 * EXIT_BOUND_MS : EXIT_BOUND_MS);
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const runBound = setTimeout(() => child.kill('SIGKILL'), RUN_BOUND_MS);
    child.on('exit', (code, signal) => {
      clearTimeout(runBound);
      clearTimeout(exitBound);
      resolve({
        code,
        signal,
        stdout,
        stderr,
        exitAfterCloseMs: closedAt === undefined ? undefined : Date.now() - closedAt,
      });
    });
  });
}

/** Runs the script; on a failed or hung run, reruns it with the live handles printed after close, to explain. */
async function runCleanly(script: string): Promise<Run> {
  const run = await runChild(script, false);
  if (run.code !== 0) {
    const diag = await runChild(script, true);
    throw new Error(
      `child exited with ${run.code ?? run.signal} (${run.exitAfterCloseMs} ms after close)\nstderr: ${run.stderr}\ndiagnostics: ${diag.stderr}`,
    );
  }
  return run;
}

describe('exit after close', () => {
  it(
    'exits on its own with code 0 right after closing a client that used every transport',
    async () => {
      const run = await runCleanly(SCRIPT);
      const { results } = JSON.parse(run.stdout) as { results: Record<string, unknown> };
      expect(results).toEqual({
        http: { echoed: true },
        sse: [{ tick: 1 }, { tick: 2 }],
        streamable_http: [{ r: 1 }, { r: 2 }],
        websocket: 5,
        tcp: 5,
        udp: 5,
        graphql: 5,
        graphql_subscription: [2, 1, 0],
        grpc: 5,
        mcp: 'Echo: bye',
        cli: 'BYE',
      });
      expect(run.exitAfterCloseMs).toBeLessThan(EXIT_BOUND_MS);
      console.info(`exit-after-close: exited ${run.exitAfterCloseMs} ms after closing the client and servers`);
    },
    2 * RUN_BOUND_MS + 5_000,
  );

  it(
    'settles every in-flight call with CLIENT_CLOSED when the client closes, then exits on its own',
    async () => {
      const run = await runCleanly(IN_FLIGHT_SCRIPT);
      const { outcomes, settleMs } = JSON.parse(run.stdout) as { outcomes: Record<string, string>; settleMs: number };
      const names = [
        'slow.http',
        'slow.sse',
        'slow.streamable',
        'slow.graphql',
        'slow.tcp',
        'slow.udp',
        'slow.ws',
        'slow.hang',
        'slow.cli',
        'mcp.everything.trigger-long-running-operation',
      ];
      expect(outcomes).toEqual(Object.fromEntries(names.map((n) => [n, 'CLIENT_CLOSED'])));
      expect(settleMs).toBeLessThan(SETTLE_BOUND_MS);
      expect(run.exitAfterCloseMs).toBeLessThan(EXIT_BOUND_MS);
      console.info(
        `close-in-flight: all calls settled ${settleMs} ms after close(); exited ${run.exitAfterCloseMs} ms after that`,
      );
    },
    2 * RUN_BOUND_MS + 5_000,
  );
});
