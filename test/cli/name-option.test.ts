/**
 * `--name` names the one manual source for every command that lists it in --help (serve-mcp and chat included): the
 * tools carry that name and their variables are looked up under it (docs/design/manual-format.md#cli-manual-names).
 * Runs the built CLI; serve-mcp is listed and called by the official MCP SDK client over stdio.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
let dir = '';
let server: ReturnType<typeof createServer>;
const seen: IncomingHttpHeaders[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  dir = mkdtempSync(join(tmpdir(), 'utcp-name-'));
  const manual = {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'ping',
        description: 'pings',
        inputs: { type: 'object', properties: {} },
        tool_call_template: {
          call_template_type: 'http',
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`,
          http_method: 'GET',
          headers: { 'x-token': '${TOKEN}' },
        },
      },
    ],
  };
  writeFileSync(join(dir, 'original.json'), JSON.stringify(manual));
  writeFileSync(join(dir, 'other.json'), JSON.stringify(manual));
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

const ENV = {
  PATH: process.env.PATH!,
  HOME: dir,
  NO_COLOR: '1',
  renamed_TOKEN: 'tok-renamed',
  original_TOKEN: 'tok-file',
};

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) =>
    execFile(process.execPath, [BIN, ...args], { cwd: dir, env: ENV, timeout: 30_000 }, (error, stdout, stderr) =>
      done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    ),
  );
}

describe('--name', () => {
  it('serve-mcp serves the tools under --name, with its variables', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve-mcp', 'original.json', '--name', 'renamed'],
      cwd: dir,
      env: ENV,
      stderr: 'pipe',
    });
    const mcp = new Client({ name: 'name-test', version: '1.0.0' });
    await mcp.connect(transport);
    onTestFinished(() => mcp.close());
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual([expect.stringMatching(/^renamed\b/)]);
    seen.length = 0;
    const result = await mcp.callTool({ name: tools[0].name, arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(seen.map((h) => h['x-token'])).toEqual(['tok-renamed']);
  }, 60_000);

  it('tools lists the manual under --name; with several sources or a config it is a usage error', async () => {
    const listed = await run(['tools', 'original.json', '--name', 'renamed', '--json']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('renamed.ping');
    expect(listed.stdout).not.toContain('original.ping');
    const two = await run(['tools', 'original.json', 'other.json', '--name', 'renamed']);
    expect(two.code).toBe(2);
    expect(two.stderr).toMatch(/--name names one manual source, and 2 were given/);
    writeFileSync(join(dir, 'utcp.config.json'), JSON.stringify({ manual_call_templates: [] }));
    onTestFinished(() => rmSync(join(dir, 'utcp.config.json'), { force: true }));
    const config = await run(['tools', 'utcp.config.json', '--name', 'renamed']);
    expect(config.code).toBe(2);
    expect(config.stderr).toMatch(/not a config file/);
  });
});
