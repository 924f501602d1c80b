/** `utcp serve-mcp <source> --code-mode` (the built CLI): an MCP client runs a script over the source's cli tools. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, expect, it, onTestFinished } from 'vitest';

const BIN = resolve(__dirname, '../../dist/cli/main.js');
const SOURCE = resolve(__dirname, '../fixtures/cli-sources/greet.json');

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does it first)');
});

it('serves code_mode.run next to the source tools; the script chains real cli tool calls', async () => {
  const mcp = new Client({ name: 'code-mode-cli-test', version: '1.0.0' });
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve-mcp', SOURCE, '--code-mode'],
      cwd: resolve(__dirname, '../fixtures/cli-sources'),
      stderr: 'ignore',
    }),
  );
  onTestFinished(() => mcp.close());
  const names = (await mcp.listTools()).tools.map((t) => t.name);
  expect(names).toEqual(expect.arrayContaining(['greet.greet', 'greet.add', 'code_mode.run', 'code_mode.describe']));
  const code = `
    const first = await greet.add({ a: 2, b: 3 });
    const second = await greet.add({ a: first.sum, b: 10 });
    return second.sum;
  `;
  const result = await mcp.callTool({ name: 'code_mode.run', arguments: { code } });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toMatchObject({ result: 15 });
}, 60_000);
