/**
 * docs/design/threat-model.md#close-during-connect: `close()` while a connection is still being opened (the SYN
 * unanswered) ends that connect at once, so the host process can exit right after. The target is a local listener
 * with a full backlog (its process stopped, so nothing is accepted and further SYNs are dropped); each case runs the
 * built package in a child process that closes its client during the connect and must then exit promptly. Before
 * the fix an HTTP-family connect (calls and discovery) kept the child alive for undici's 10 s connect timeout, and
 * an MCP-over-HTTP discovery held close() itself for the SDK's 10 s probe timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../fixtures/robustness/close-during-connect.mjs', import.meta.url));
/** How long the child may take to exit once it closed its client (a quiet machine needs ~20 ms; the bug: 10 s). */
const EXIT_BOUND_MS = 3_000;
/** How long close() may take to settle the pending operations (a quiet machine: well under 0.5 s; the bug: 10 s). */
const SETTLE_BOUND_MS = 3_000;
/** Bound on one child's whole run; it is killed after it. */
const RUN_BOUND_MS = 20_000;

let listener: ChildProcess;
let port: number;
const fillers: Socket[] = [];

beforeAll(async () => {
  listener = spawn(
    process.execPath,
    [
      '-e',
      "require('net').createServer().listen({ host: '127.0.0.1', port: 0, backlog: 1 }, function () { console.log(this.address().port) })",
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  port = Number(await new Promise<string>((resolve) => listener.stdout!.once('data', (d) => resolve(String(d)))));
  // Stopped, it accepts nothing: two connections fill its queue (backlog 1), later SYNs go unanswered.
  listener.kill('SIGSTOP');
  for (let i = 0; i < 4; i++) fillers.push(connect(port, '127.0.0.1').on('error', () => {}));
});

afterAll(() => {
  for (const socket of fillers) socket.destroy();
  listener.kill('SIGKILL');
});

interface Run {
  code: number | null;
  outcomes: Record<string, string>;
  settleMs: number;
  exitAfterCloseMs: number;
  stderr: string;
}

function run(cases: string[]): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SCRIPT, String(port), ...cases], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let closedAt = 0;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (!closedAt && stdout.includes('\n')) closedAt = Date.now();
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const bound = setTimeout(() => child.kill('SIGKILL'), RUN_BOUND_MS);
    child.on('exit', (code) => {
      clearTimeout(bound);
      const line = /^closed (.*)$/m.exec(stdout)?.[1];
      const result = line
        ? (JSON.parse(line) as { outcomes: Record<string, string>; settleMs: number })
        : { outcomes: {}, settleMs: Number.POSITIVE_INFINITY };
      resolve({
        code,
        ...result,
        exitAfterCloseMs: closedAt ? Date.now() - closedAt : Number.POSITIVE_INFINITY,
        stderr,
      });
    });
  });
}

describe('close() during a pending connect', () => {
  it.each([
    [['call:http']],
    [['discovery:http']],
    [['discovery:sse']],
    [['discovery:mcp']],
    [['call:tcp', 'discovery:tcp', 'call:websocket', 'discovery:websocket']],
    [['call:grpc', 'discovery:grpc']],
  ])(
    'ends the connect at once and the process exits right after: %s',
    async (cases) => {
      const r = await run(cases);
      expect(r.code, r.stderr).toBe(0);
      // Every operation was still connecting when the client closed, and ended with the close.
      expect(Object.keys(r.outcomes).sort()).toEqual(cases.map((c) => c.replace(':', ' ')).sort());
      for (const outcome of Object.values(r.outcomes)) expect(outcome).toMatch(/CLIENT_CLOSED|client was closed/);
      expect(r.settleMs).toBeLessThan(SETTLE_BOUND_MS);
      expect(r.exitAfterCloseMs).toBeLessThan(EXIT_BOUND_MS);
    },
    RUN_BOUND_MS + 5_000,
  );
});
