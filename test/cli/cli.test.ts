/** Runs the built `utcp` binary as a child process and checks its output and exit codes. */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { rmSync } from 'node:fs';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const BIN = resolve(__dirname, '../../dist/cli/main.js');
const FIXTURES = resolve(__dirname, '../fixtures/cli-sources');

function run(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd ?? FIXTURES,
        env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1', ...options.env },
        timeout: 20_000,
      },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** A temporary directory removed when the test ends. */
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-cli-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does it first)');
});

describe('utcp', () => {
  it('prints help and exits 2 without a command, 0 with --help', async () => {
    const bare = await run([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toContain('Commands:');
    const help = await run(['call', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(
      "Usage: utcp call <tool> [sources...] [--arg k=v ...] [--args '{...}'] [--stream] [--json]",
    );
  });

  it('lists each option of a command once in its --help, and --json means JSON output everywhere', async () => {
    const call = (await run(['call', '--help'])).stdout;
    expect(call.match(/^  --timeout /gm)).toHaveLength(1);
    expect(call.match(/^  --json /gm)).toHaveLength(1);
    expect(call).toMatch(/^  --args '\{\.\.\.\}'\s+all arguments as one JSON object/m);
    const tools = (await run(['tools', '--help'])).stdout;
    expect(tools).toMatch(/^  --json\s+machine-readable output/m);
  });

  it('lists tools as an aligned table, and as JSON with --json', async () => {
    const r = await run(['tools', 'greet.json']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^TOOL\s+DESCRIPTION\s+TAGS$/);
    expect(lines[1]).toMatch(/^greet\.greet\s+Say hello to someone\s+demo$/);
    expect(lines[1].indexOf('Say')).toBe(lines[0].indexOf('DESCRIPTION'));
    const json = JSON.parse((await run(['tools', 'greet.json', '--json'])).stdout);
    expect(json.map((t: { name: string }) => t.name)).toEqual(['greet.greet', 'greet.add', 'greet.fail']);
  });

  it('ranks tools with search', async () => {
    const r = await run(['search', 'add numbers', 'greet.json', '--json']);
    expect(JSON.parse(r.stdout)[0].name).toBe('greet.add');
  });

  it('calls a tool with --arg, coercing by schema, and never lets a value reach the shell', async () => {
    const hello = await run(['call', 'greet.greet', 'greet.json', '--arg', 'who=Bob; echo pwned']);
    expect(hello).toMatchObject({ code: 0, stdout: 'hello Bob; echo pwned\n' });
    const sum = await run(['call', 'add', 'greet.json', '--arg', 'a=2', '--args', '{"b": 40}']);
    expect(sum.code).toBe(0);
    expect(JSON.parse(sum.stdout)).toEqual({ sum: 42 });
  });

  it('exits 1 with a one-line error and a hint when a call fails', async () => {
    const missing = await run(['call', 'greet', 'greet.json']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('error [INVALID_ARGUMENTS]: Invalid arguments for greet.greet: who: required');
    expect(missing.stderr).toContain('hint: pass arguments');
    const failed = await run(['call', 'fail', 'greet.json']);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/\[PROCESS_EXIT\].*exited with code 3.*broken/);
    const unknown = await run(['call', 'nope', 'greet.json']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('Tool not found: nope');
  });

  it('exits 2 on usage errors and 3 when a source fails to load', async () => {
    expect((await run(['call', 'greet', 'greet.json', '--bogus'])).code).toBe(2);
    expect((await run(['frobnicate'])).code).toBe(2);
    const bad = await run(['tools', 'no-such-file.json']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('No such file: no-such-file.json');
    const dir = tempDir();
    writeFileSync(join(dir, 'broken.json'), '{"tools": "nope"}');
    const broken = await run(['tools', 'broken.json'], { cwd: dir });
    expect(broken.code).toBe(3);
    expect(broken.stderr).toContain('broken');
  });

  it('discovers utcp.config.json in the current directory and reads variables from .env', async () => {
    const server = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url === '/utcp') {
        const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        res.end(
          JSON.stringify({
            tools: [
              {
                name: 'whoami',
                description: 'Echo the api key header',
                tool_call_template: { call_template_type: 'http', url: `${base}/me`, headers: { 'X-Key': '${KEY}' } },
              },
            ],
          }),
        );
      } else res.end(JSON.stringify({ key: req.headers['x-key'] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    const dir = tempDir();
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/utcp`;
    writeFileSync(
      join(dir, 'utcp.config.json'),
      JSON.stringify({ manual_call_templates: [{ name: 'api', call_template_type: 'http', url }] }),
    );
    writeFileSync(join(dir, '.env'), 'api_KEY=from-dotenv\n');
    const r = await run(['call', 'api.whoami'], { cwd: dir });
    expect(r).toMatchObject({ code: 0 });
    expect(JSON.parse(r.stdout)).toEqual({ key: 'from-dotenv' });
    const inspect = await run(['inspect', '--json'], { cwd: dir });
    expect(JSON.parse(inspect.stdout)[0]).toMatchObject({ name: 'api', success: true, tools: 1 });
  });

  it('inspect lists required variables and exits 1 when one is missing', async () => {
    const dir = tempDir();
    copyFileSync(join(FIXTURES, 'greet.json'), join(dir, 'greet.json'));
    writeFileSync(
      join(dir, 'secret.json'),
      JSON.stringify({
        tools: [
          {
            name: 't',
            tool_call_template: {
              call_template_type: 'cli',
              commands: [{ command: 'echo x' }],
              env_vars: { TOKEN: '${TOKEN}' },
            },
          },
        ],
      }),
    );
    const r = await run(['inspect', 'secret.json'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/missing\s+secret_TOKEN/);
    const ok = await run(['inspect', 'secret.json'], { cwd: dir, env: { secret_TOKEN: 'x' } });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/set\s+secret_TOKEN/);
  });

  it('inspect asks for the auth and base-URL variables of a spec without schemes and with a relative server', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'spec.json'),
      JSON.stringify({
        openapi: '3.0.3',
        info: { title: 'T', version: '1' },
        servers: [{ url: '/api/v3' }],
        paths: { '/pets': { get: { operationId: 'listPets', responses: { '200': { description: 'ok' } } } } },
      }),
    );
    writeFileSync(
      join(dir, 'utcp.config.json'),
      JSON.stringify({
        // A remap: api_TOKEN is whatever MY_TOKEN holds, so it is missing while MY_TOKEN is.
        variables: { api_TOKEN: '${MY_TOKEN}' },
        manual_call_templates: [
          {
            name: 'api',
            call_template_type: 'file',
            file_path: 'spec.json',
            auth_tools: {
              auth_type: 'api_key',
              api_key: 'Bearer ${TOKEN}',
              var_name: 'Authorization',
              location: 'header',
            },
          },
        ],
      }),
    );
    const r = await run(['inspect'], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/missing\s+api_TOKEN \(from MY_TOKEN\)/);
    expect(r.stdout).toMatch(/missing\s+api_BASE_URL/);
    expect(r.stdout).toMatch(/warning .*relative server URL "\/api\/v3"/);
    // inspect lists the warnings itself: no "`utcp inspect` lists them" pointer on stderr.
    expect(r.stderr).not.toContain('utcp inspect');
    const ok = await run(['inspect'], { cwd: dir, env: { MY_TOKEN: 't', api_BASE_URL: 'https://api.example.com' } });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/set\s+api_TOKEN/);
    expect(ok.stdout).toMatch(/set\s+api_BASE_URL/);
  });

  it('converts an OpenAPI spec to a manual file and prints the report', async () => {
    const dir = tempDir();
    copyFileSync(join(FIXTURES, 'pets.yaml'), join(dir, 'pets.yaml'));
    const r = await run(['convert', 'pets.yaml', '-o', 'pets.json', '--name', 'pets'], { cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/OpenAPI 3\.0: 1 tool\(s\) from 2 operation\(s\), 1 skipped/);
    expect(r.stderr).toMatch(/warning.*HEAD \/pets\/\{petId\}/);
    const manual = JSON.parse(readFileSync(join(dir, 'pets.json'), 'utf8'));
    expect(manual.tools[0]).toMatchObject({
      name: 'getPet',
      tool_call_template: { url: 'https://pets.example.com/v1/pets/{petId}', http_method: 'GET' },
    });
  });
});

describe('utcp chat', () => {
  /** A scripted OpenAI Chat Completions server: first asks for greet.greet, then answers with text. */
  async function scriptedModel() {
    const bodies: any[] = [];
    const server = createServer((req, res) => {
      let data = '';
      req.on('data', (d) => (data += d));
      req.on('end', () => {
        const body = JSON.parse(data);
        bodies.push(body);
        const toolResult = body.messages.find((m: { role: string }) => m.role === 'tool');
        const message = toolResult
          ? { role: 'assistant', content: `The tool said: ${toolResult.content}` }
          : {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'call_1',
                  type: 'function',
                  function: {
                    name: body.tools.find((t: any) => t.function.name.includes('greet')).function.name,
                    arguments: '{"who":"Ada"}',
                  },
                },
              ],
            };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            model: 'scripted',
            choices: [{ index: 0, message, finish_reason: toolResult ? 'stop' : 'tool_calls' }],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies };
  }

  it('runs one turn with --prompt: tool calls on stderr, the answer on stdout', async () => {
    const llm = await scriptedModel();
    const r = await run(['chat', 'greet.json', '--prompt', 'Say hello to Ada', '--yes'], {
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: 'test-key' },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('→ greet.greet({"who":"Ada"})');
    expect(r.stderr).toMatch(/✓ greet\.greet \(\d+ ms\)/);
    expect(r.stdout.trim()).toBe('The tool said: hello Ada');
    expect(llm.bodies[1].messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: 'hello Ada' });
  });

  it('denies a command-line tool without a terminal or --yes, and tells the model', async () => {
    const llm = await scriptedModel();
    const r = await run(['chat', 'greet.json', '--prompt', 'Say hello to Ada'], { env: { OPENAI_BASE_URL: llm.url } });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('× greet.greet denied');
    expect(llm.bodies[1].messages.at(-1).content).toContain('--yes');
  });

  it('explains how to configure a model when none is set', async () => {
    const r = await run(['chat', 'greet.json', '--prompt', 'hi']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('OPENAI_BASE_URL');
  });
});

describe('utcp serve-mcp', () => {
  it('serves the tools of a manual to an MCP client over stdio', async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const mcp = new Client({ name: 'test', version: '1.0.0' });
    await mcp.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve-mcp', 'greet.json'],
        cwd: FIXTURES,
        stderr: 'ignore',
      }),
    );
    onTestFinished(() => mcp.close());
    const { tools } = await mcp.listTools();
    expect(tools.map((t) => t.name)).toEqual(['greet.greet', 'greet.add', 'greet.fail']);
    const result = await mcp.callTool({ name: 'greet.greet', arguments: { who: 'MCP host' } });
    expect(result.content).toEqual([{ type: 'text', text: 'hello MCP host' }]);
    const failed = await mcp.callTool({ name: 'greet.fail', arguments: {} });
    expect(failed.isError).toBe(true);
  });
});
