/**
 * `serve-mcp` of a converted OpenAPI spec (issue 13 item 2): the GitHub REST spec's issues tools, served over stdio
 * by the MCP bridge in a child process, listed and called by the official MCP SDK client, whose listTools
 * compiles every outputSchema with Ajv and whose callTool validates structuredContent against it.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/mcp-bridge/serve-github.ts', import.meta.url));
const LABEL = {
  id: 1,
  node_id: 'MDU6TGFiZWwx',
  url: 'https://api.github.com/repos/o/r/labels/defect',
  name: 'defect',
  description: null,
  color: 'f29513',
  default: false,
};

let api: ReturnType<typeof createServer>;
let apiBase = '';
const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  api = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(LABEL));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => api?.close(resolve));
});

async function listAndCall(mcp: Client): Promise<void> {
  const { tools } = await mcp.listTools();
  // The bridge's MCP names encode the UTCP names (github.issues_update_label → github.issues_update-label).
  const update = tools.find((t) => /issues.update.label$/.test(t.name));
  expect(tools.length).toBeGreaterThan(30);
  expect(update?.outputSchema).toBeDefined();
  expect(tools.find((t) => /issues.update$/.test(t.name))).toBeDefined();
  const result = await mcp.callTool({
    name: update!.name,
    arguments: { owner: 'o', repo: 'r', name: 'bug', body: { new_name: 'defect', color: 'f29513' } },
  });
  expect(result.isError).toBeFalsy();
  expect(result.structuredContent).toEqual(LABEL);
  const r = seen.at(-1)!;
  expect(r.method).toBe('PATCH');
  expect(r.url).toBe('/repos/o/r/labels/bug');
  expect(r.headers.authorization).toBe('Bearer ghp_from_env');
  expect(JSON.parse(r.body)).toEqual({ new_name: 'defect', color: 'f29513' });
}

describe('serve-mcp of the converted GitHub spec, with the official MCP SDK client', () => {
  it('over stdio', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', fixture, 'stdio', apiBase],
      cwd: repoRoot,
      env: { ...(process.env as Record<string, string>), GITHUB_TOKEN: 'ghp_from_env' },
      stderr: 'pipe',
    });
    const mcp = new Client({ name: 'github-stdio-test', version: '1.0.0' });
    await mcp.connect(transport);
    onTestFinished(() => mcp.close());
    await listAndCall(mcp);
  }, 120_000);
});
