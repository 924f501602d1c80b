/**
 * docs/design/threat-model.md#mcp-servers. A hostile stdio MCP server cannot pin a CPU core
 * (line cap, junk budget, session dropped with a typed error) nor hold up close() by ignoring SIGTERM.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, onTestFinished, vi } from 'vitest';
import { McpServerError, UtcpClient } from './packed.js';
import { waitUntilGone } from '../fixtures/cli/harness.js';
import { FIXTURE_DIR, processAlive } from '../fixtures/mcp/harness.js';
import { hostPidOf } from '../helpers/host-processes.js';

const HOSTILE = join(FIXTURE_DIR, 'hostile-server.mjs');

function manual(name: string, flags: string[], env: Record<string, string> = {}) {
  return {
    name,
    call_template_type: 'mcp' as const,
    config: { mcpServers: { h: { command: process.execPath, args: [HOSTILE, ...flags], env } } },
  };
}

function pidFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-hostile-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'pids');
}

/**
 * The host pids of the processes the server wrote to `file` (each pid as the process saw it, which inside the
 * server's PID namespace is not ours: docs/design/threat-model.md#process-trees).
 */
const pidsIn = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const pid = hostPidOf(Number(line), `HOSTILE_PID_FILE=${file}`);
      if (pid === undefined) throw new Error(`no process ${line} with HOSTILE_PID_FILE=${file}`);
      return pid;
    });

async function client(): Promise<UtcpClient> {
  const c = await UtcpClient.create();
  onTestFinished(() => c.close());
  return c;
}

it('drops a session whose server floods stdout with non-JSON lines while no call runs, and kills the server', async () => {
  const pids = pidFile();
  const c = await client();
  const r = await c.registerManual(manual('idle', ['--flood-junk-idle'], { HOSTILE_PID_FILE: pids }));
  expect(r.success).toBe(true);
  const [pid] = pidsIn(pids);
  // The flood starts right after tools/list; the junk budget ends the session and the process.
  await vi.waitFor(() => expect(processAlive(pid)).toBe(false), { timeout: 20_000, interval: 50 });
});

it('fails an in-flight call with McpServerError naming the junk flood', async () => {
  const c = await client();
  expect((await c.registerManual(manual('oncall', ['--flood-junk-on-call']))).success).toBe(true);
  const error = await c.callTool('oncall.h.work', {}, { timeoutMs: 60_000 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(McpServerError);
  expect((error as Error).message).toMatch(/flooded stdout with output that is not JSON-RPC/);
});

it('fails an in-flight call answered by an endless line, once the line passes the cap (never buffering it all)', async () => {
  const c = await UtcpClient.create({ limits: { max_response_bytes: 256 * 1024 } });
  onTestFinished(() => c.close());
  expect((await c.registerManual(manual('huge', ['--huge-line-on-call']))).success).toBe(true);
  const error = await c.callTool('huge.h.work', {}, { timeoutMs: 60_000 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(McpServerError);
  expect((error as Error).message).toMatch(/a line longer than \d+ bytes/);
});

it('close() kills servers that ignore SIGTERM and stdin EOF, all of them at once', async () => {
  const pids = pidFile();
  const c = await UtcpClient.create();
  for (const name of ['a', 'b', 'c']) {
    const r = await c.registerManual(manual(name, ['--ignore-sigterm'], { HOSTILE_PID_FILE: pids }));
    expect(r.success).toBe(true);
  }
  const started = pidsIn(pids);
  expect(started).toHaveLength(3);
  const t0 = performance.now();
  await c.close();
  const took = performance.now() - t0;
  for (const pid of started) expect(processAlive(pid)).toBe(false);
  // Sequential closing with the old 0.5 s + 1 s grace took 4.5 s for three; in parallel with short grace ~0.4 s.
  expect(took).toBeLessThan(4000);
});

const hasSetsid = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v setsid']).length > 0;
  } catch {
    return false;
  }
})();

it.skipIf(process.platform !== 'linux' || !hasSetsid)(
  'close() kills what a stdio server left behind in a new session (setsid), even after the server itself exited',
  async () => {
    const pids = pidFile();
    const c = await UtcpClient.create();
    const r = await c.registerManual(manual('tree', ['--setsid-child'], { HOSTILE_PID_FILE: pids }));
    expect(r.success).toBe(true);
    const [server, escaped] = pidsIn(pids);
    expect(processAlive(server)).toBe(true);
    expect(processAlive(escaped)).toBe(true);
    const stat = readFileSync(`/proc/${escaped}/stat`, 'latin1');
    const [, , pgrp, session] = stat
      .slice(stat.lastIndexOf(')') + 2)
      .split(' ')
      .map(Number);
    expect(pgrp).toBe(session); // its own session and group: a signal to the server's group misses it
    expect(pgrp).not.toBe(server);
    await c.close();
    expect(await waitUntilGone(server)).toBe(true);
    // The escaped grandchild is gone too (a zombie awaiting its reaper counts as gone).
    expect(await waitUntilGone(escaped)).toBe(true);
  },
);
