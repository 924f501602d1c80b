/**
 * `serve-mcp` of a converted OpenAPI spec (issue 13 item 2): the GitHub REST spec served by the built `utcp serve-mcp`
 * in a child process (its issues tools over stdio; all of it over HTTP), from config files the CLI reads, listed and
 * called by the official MCP SDK client, whose listTools compiles every outputSchema with Ajv and whose callTool
 * validates structuredContent against it.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
const GITHUB_SPEC = join(
  dirname(createRequire(import.meta.url).resolve('@octokit/openapi/package.json')),
  'generated',
  'api.github.com.json',
);
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
/** A temp dir with the spec and the CLI's configs: utcp.config.json (all of it) and issues.config.json (its issues tag). */
let dir = '';
const seen: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];

beforeAll(async () => {
  api = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === '/repos/o/r/issues/7') {
        // GitHub's refusal shape; an error result carries no structuredContent to validate.
        res.writeHead(422, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ message: 'Validation Failed', status: '422' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(LABEL));
    });
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;

  dir = mkdtempSync(join(tmpdir(), 'utcp-github-serve-'));
  copyFileSync(GITHUB_SPEC, join(dir, 'github.json'));
  // The README's recipe for a spec without security schemes, as a config the CLI reads.
  const config = (extra: Record<string, unknown>) =>
    JSON.stringify({
      variables: { github_GITHUB_TOKEN: '${GITHUB_TOKEN}' },
      manual_call_templates: [
        {
          name: 'github',
          call_template_type: 'file',
          file_path: 'github.json',
          base_url: apiBase,
          auth_tools: {
            auth_type: 'api_key',
            api_key: 'Bearer ${GITHUB_TOKEN}',
            var_name: 'Authorization',
            location: 'header',
          },
          ...extra,
        },
      ],
    });
  writeFileSync(join(dir, 'utcp.config.json'), config({}));
  writeFileSync(join(dir, 'issues.config.json'), config({ openapi_filter: { include_tags: ['issues'] } }));
});

afterAll(async () => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  await new Promise((resolve) => api?.close(resolve));
});

/** The CLI's environment: no inherited variables but PATH/HOME, the token the config reads. */
const cliEnv = () => ({
  PATH: process.env.PATH!,
  HOME: process.env.HOME ?? '/tmp',
  NO_COLOR: '1',
  GITHUB_TOKEN: 'ghp_from_env',
});

function requireBuild(): void {
  if (!existsSync(BIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does it first)');
}

async function listAndCall(mcp: Client): Promise<void> {
  const { tools } = await mcp.listTools();
  // Only the issues tag (openapi_filter): GitHub names its operations <tag>/<action>.
  expect(tools.filter((t) => !t.name.startsWith('github.issues_')).map((t) => t.name)).toEqual([]);
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
  it('over stdio: its issues tag, served by the built `utcp serve-mcp` from --config', async () => {
    requireBuild();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'serve-mcp', '--config', 'issues.config.json'],
      cwd: dir,
      env: cliEnv(),
      stderr: 'pipe',
    });
    const mcp = new Client({ name: 'github-stdio-test', version: '1.0.0' });
    await mcp.connect(transport);
    onTestFinished(() => mcp.close());
    await listAndCall(mcp);
  }, 120_000);

  it('over HTTP: all of the spec, served by the built `utcp serve-mcp --http` from a config', async () => {
    requireBuild();
    const child = spawn(process.execPath, [BIN, 'serve-mcp', '--http'], {
      cwd: dir,
      env: cliEnv(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    });
    let stderr = '';
    const served = await new Promise<{ count: number; url: string; token: string }>((resolve, reject) => {
      child.stderr!.setEncoding('utf8');
      child.stderr!.on('data', (chunk: string) => {
        stderr += chunk;
        // The CLI prints the token it generated once, after the URL (docs/design/threat-model.md#mcp-bridge-auth).
        const m = /serving (\d+) tool\(s\) over MCP at (\S+)[\s\S]*?bearer token.*: (\S+)\n/.exec(stderr);
        if (m) resolve({ count: Number(m[1]), url: m[2], token: m[3] });
      });
      child.once('exit', (code) => reject(new Error(`utcp serve-mcp exited with ${code}: ${stderr}`)));
    });
    expect(served.count).toBeGreaterThan(1000);

    // Idle connections outlive the host's pause after tools/list (docs/design/transports.md#mcp-bridge-idle).
    const authorization = `Bearer ${served.token}`;
    const probe = await fetch(served.url, { headers: { authorization } });
    await probe.arrayBuffer();
    expect(probe.headers.get('keep-alive')).toBe('timeout=600');

    const mcp = new Client({ name: 'github-http-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(served.url), { requestInit: { headers: { authorization } } }),
    );
    onTestFinished(() => mcp.close());
    // The client compiles all of the outputSchemas here, blocking its event loop for seconds; the next POST must
    // still find its connection open (it failed with "other side closed" while the bridge closed idle ones after 5 s).
    const { tools } = await mcp.listTools();
    expect(tools).toHaveLength(served.count);
    const update = tools.find((t) => /issues.update.label$/.test(t.name))!;
    const result = await mcp.callTool({
      name: update.name,
      arguments: { owner: 'o', repo: 'r', name: 'bug', body: { new_name: 'defect', color: 'f29513' } },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(LABEL);
    const r = seen.at(-1)!;
    expect(`${r.method} ${r.url}`).toBe('PATCH /repos/o/r/labels/bug');
    expect(r.headers.authorization).toBe('Bearer ghp_from_env');

    // milestone: null (GitHub's way to clear it) passes the bridge's argument check and goes out as JSON null.
    const issue = tools.find((t) => /issues.update$/.test(t.name))!;
    const refused = await mcp.callTool({
      name: issue.name,
      arguments: { owner: 'o', repo: 'r', issue_number: 7, body: { milestone: null } },
    });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('422');
    expect(`${seen.at(-1)!.method} ${seen.at(-1)!.url}`).toBe('PATCH /repos/o/r/issues/7');
    expect(JSON.parse(seen.at(-1)!.body)).toEqual({ milestone: null });
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer ghp_from_env');

    await mcp.close();
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  }, 240_000);
});
