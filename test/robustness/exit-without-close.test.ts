/**
 * A script that forgets `client.close()` must still exit once its work is done: idle sessions, servers and pools
 * hold nothing open. Runs the built package in a child process against server-everything over stdio.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { EVERYTHING_ENTRY } from '../fixtures/mcp/harness.js';

const DIST = resolve(__dirname, '../../dist/index.js');

it('exits on its own after an MCP stdio call when close() is never called', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-noclose-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'no-close.mjs');
  writeFileSync(
    script,
    `
import { UtcpClient } from ${JSON.stringify(DIST)};
const client = await UtcpClient.create({ manual_call_templates: [{ name: 'ev', call_template_type: 'mcp',
  config: { mcpServers: { everything: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(EVERYTHING_ENTRY)}, 'stdio'] } } } }] });
if (!client.initialRegistrations[0].success) throw new Error(client.initialRegistrations[0].errors.join('; '));
console.log(await client.callTool('ev.everything.echo', { message: 'hi' }));
console.log('done at', Date.now());
`,
  );
  const started = Date.now();
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string; killed: boolean }>((done) => {
    execFile(
      process.execPath,
      [script],
      { cwd: dir, timeout: 45_000, env: { PATH: process.env.PATH! } },
      (error, stdout, stderr) =>
        done({
          code: error ? (typeof error.code === 'number' ? error.code : null) : 0,
          stdout,
          stderr,
          killed: Boolean(error?.killed),
        }),
    );
  });
  expect(result.stderr).toBe('');
  expect(result.killed).toBe(false);
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('Echo: hi');
  const doneAt = Number(/done at (\d+)/.exec(result.stdout)?.[1]);
  // Without the fix the process never exits (the 45 s timeout kills it); with it, it ends right after the last line.
  expect(Date.now() - doneAt).toBeLessThan(20_000);
  expect(doneAt).toBeGreaterThanOrEqual(started);
}, 60_000);
