/** `utcp serve-mcp --code-tools <dir>` (the built CLI) serves the toolset to an MCP client over stdio. */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { tempDir, writeFiles } from './helpers.js';

const BIN = resolve(__dirname, '../../dist/cli/main.js');

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does it first)');
});

function liveSleeps(token: string): number {
  let n = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0])) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0');
      if (/(^|\/)sleep$/.test(argv[0]) && argv.some((a) => a.includes(token))) n++;
    } catch {
      // gone
    }
  }
  return n;
}

describe('utcp serve-mcp --code-tools', () => {
  it('serves code.* tools; a background process ends with the server', async () => {
    const root = await tempDir('serve-code-');
    await writeFiles(root, { 'a.txt': 'alpha\n' });
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        // bash stays under bubblewrap where it works; the opt-in only lets the test run on a machine without it.
        args: [BIN, 'serve-mcp', '--code-tools', root, '--dangerously-run-unsandboxed'],
        cwd: root,
        stderr: 'ignore',
      }),
    );
    let open = true;
    onTestFinished(() => (open ? mcp.close() : undefined));
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'apply_patch',
        'bash',
        'bash_output',
        'edit',
        'glob',
        'grep',
        'list_processes',
        'ls',
        'read',
        'save_plan',
        'save_plan_append',
        'stop_process',
        'update_plan',
        'web_fetch',
        'write',
        'write_append',
      ].map((t) => `code.${t}`),
    );
    const read = await mcp.callTool({ name: 'code.read', arguments: { path: 'a.txt' } });
    expect((read.content as Array<{ text: string }>)[0].text).toMatch(/^ {3}1:[0-9a-z]{4}\talpha$/);
    const edit = await mcp.callTool({
      name: 'code.edit',
      arguments: { path: 'a.txt', old_string: 'alpha', new_string: 'beta' },
    });
    expect(edit.isError).toBeFalsy();
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('beta\n');
    const outside = await mcp.callTool({ name: 'code.read', arguments: { path: '../etc/passwd' } });
    expect(outside.isError).toBe(true);

    const token = `${process.pid}${Date.now()}`;
    const started = await mcp.callTool({
      name: 'code.bash',
      arguments: { command: `sleep 5${token}`, run_in_background: true },
    });
    expect((started.content as Array<{ text: string }>)[0].text).toMatch(/^Started process 1 in the background/);
    for (let i = 0; liveSleeps(token) === 0 && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
    expect(liveSleeps(token)).toBe(1);
    await mcp.close();
    open = false;
    for (let i = 0; liveSleeps(token) > 0 && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
    expect(liveSleeps(token)).toBe(0);
  });

  it('refuses bash without a kernel sandbox unless --dangerously-run-unsandboxed (docs/design/code-tools.md#unsandboxed)', async () => {
    const root = await tempDir('serve-code-nobwrap-');
    // No bwrap on PATH: sandbox auto finds none. stdin at EOF ends a server that did start.
    const run = (...flags: string[]) =>
      spawnSync(process.execPath, [BIN, 'serve-mcp', '--code-tools', root, ...flags], {
        cwd: root,
        env: { PATH: '/nonexistent' },
        input: '',
        encoding: 'utf8',
        timeout: 30_000,
      });
    const refused = run();
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('NOT_SUPPORTED');
    expect(refused.stderr).toContain('--dangerously-run-unsandboxed');
    expect(refused.stderr).not.toContain('serving');
    const opted = run('--dangerously-run-unsandboxed');
    expect(opted.status, opted.stderr).toBe(0);
    expect(opted.stderr).toContain('sandbox none: bwrap is not installed');
    expect(opted.stderr).toContain('serving 16 tool(s)');
  });
});
