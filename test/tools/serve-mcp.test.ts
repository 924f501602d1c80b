/** `utcp serve-mcp --code-tools <dir>` (the built CLI) serves the toolset to an MCP client over stdio. */
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
        args: [BIN, 'serve-mcp', '--code-tools', root],
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
        'stop_process',
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
});
