/**
 * The `utcp` command as a well-behaved Unix tool: quiet on a closed pipe, documented exit codes for every command,
 * errors on stderr and as an `error` object in --json output, help generated from the parser's own options.
 * Runs the built binary (dist/) as a child process.
 */
import { execFile, spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const ROOT = resolve(__dirname, '../..');
const BIN = resolve(ROOT, 'dist/cli/main.js');
const FIXTURES = resolve(__dirname, '../fixtures/cli-sources');
const ENV = { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', NO_COLOR: '1' };

type Result = { code: number; stdout: string; stderr: string };

function run(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: options.cwd ?? FIXTURES, env: { ...ENV, ...options.env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        done({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Runs the binary with its stdout pipe already closed by the reader, as `utcp ... | head -0` would. */
function runWithClosedStdout(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; stdin?: string } = {},
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? FIXTURES,
      env: { ...ENV, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    if (options.stdin) child.stdin.write(options.stdin);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code, stderr });
    });
  });
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-cli-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A spec with many operations, so that printing it fills any pipe buffer. */
function bigSpec(dir: string): string {
  const paths: Record<string, unknown> = {};
  for (let i = 0; i < 400; i++)
    paths[`/items${i}/{id}`] = {
      get: {
        operationId: `getItem${i}`,
        summary: `Get item ${i} `.repeat(8),
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
      },
    };
  const file = join(dir, 'big.json');
  writeFileSync(
    file,
    JSON.stringify({
      openapi: '3.0.3',
      info: { title: 'big', version: '1' },
      servers: [{ url: 'https://big.example.com' }],
      paths,
    }),
  );
  return file;
}

beforeAll(() => {
  if (!existsSync(BIN)) throw new Error('dist/cli/main.js is missing: run `npm run build` (npm test does it first)');
});

describe('a closed stdout pipe ends the command quietly with exit 0', () => {
  const cases: Array<[string, string[]]> = [
    ['utcp --help', ['--help']],
    ['tools', ['tools', 'greet.json']],
    ['tools --json', ['tools', 'greet.json', '--json']],
    ['search', ['search', 'hello', 'greet.json']],
    ['call', ['call', 'greet', 'greet.json', '--arg', 'who=Ada']],
    ['inspect', ['inspect', 'greet.json']],
    ['chat --help', ['chat', '--help']],
    ['serve-mcp --help', ['serve-mcp', '--help']],
  ];
  for (const [label, args] of cases) {
    it(label, async () => {
      const r = await runWithClosedStdout(args);
      expect(r.stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
      expect(r.code).toBe(0);
    });
  }

  it('convert', async () => {
    const dir = tempDir();
    const r = await runWithClosedStdout(['convert', bigSpec(dir)], { cwd: dir });
    expect(r.stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
    expect(r.code).toBe(0);
  });

  it('serve-mcp on stdio', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    const r = await runWithClosedStdout(['serve-mcp', 'greet.json'], { stdin: `${init}\n` });
    expect(r.stderr).not.toMatch(/EPIPE|at .*\.js:\d+/);
    expect(r.code).toBe(0);
  });

  it('through a real `| head -1`', async () => {
    const dir = tempDir();
    const spec = bigSpec(dir);
    const out = await new Promise<string>((done) => {
      execFile(
        'bash',
        ['-c', `"${process.execPath}" "${BIN}" convert "${spec}" | head -1; echo "status=\${PIPESTATUS[0]}"`],
        { cwd: dir, env: ENV, timeout: 30_000 },
        (_e, stdout, stderr) => done(stdout + stderr),
      );
    });
    expect(out).toContain('status=0');
    expect(out).not.toContain('EPIPE');
  });
});

describe('exit codes, as documented: 0 ok, 1 a call failed, 2 usage, 3 a source failed', () => {
  it('a missing source file exits 3 from every command, naming the file, with nothing on stdout', async () => {
    const dir = tempDir();
    const model = { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' };
    for (const args of [
      ['tools', 'nope.json'],
      ['search', 'q', 'nope.json'],
      ['call', 't', 'nope.json'],
      ['inspect', 'nope.json'],
      ['convert', 'nope.json'],
      ['serve-mcp', 'nope.json'],
      ['chat', 'nope.json', '--prompt', 'hi'],
    ]) {
      const r = await run(args, { cwd: dir, env: model });
      expect({ args, code: r.code }).toEqual({ args, code: 3 });
      expect(r.stderr).toContain('No such file: nope.json');
      expect(r.stdout).toBe('');
    }
  });

  it('a missing --config file exits 3', async () => {
    const r = await run(['tools', '--config', 'missing.config.json'], { cwd: tempDir() });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('No such config file');
  });

  it('usage errors exit 2 and say how to get help', async () => {
    for (const args of [
      ['frobnicate'],
      ['tools', '--bogus'],
      ['call'],
      ['search'],
      ['convert'],
      ['call', 'greet', 'greet.json', '--timeout', 'soon'],
    ]) {
      const r = await run(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toContain('--help');
    }
  });

  it('inspect exits 1 when a variable is missing, with and without --json', async () => {
    const dir = tempDir();
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
    const human = await run(['inspect', 'secret.json'], { cwd: dir });
    const json = await run(['inspect', 'secret.json', '--json'], { cwd: dir });
    expect(human.code).toBe(1);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: { code: 'MISSING_VARIABLE', message: 'Missing variable(s): secret_TOKEN' },
      manuals: [{ name: 'secret', variables: [{ name: 'secret_TOKEN', set: false }] }],
    });
    expect((await run(['inspect', 'secret.json', '--json'], { cwd: dir, env: { secret_TOKEN: 'x' } })).code).toBe(0);
  });
});

describe('errors in --json output', () => {
  it('a failed source gives an error object instead of an empty list', async () => {
    const r = await run(['tools', 'nope.json', '--json'], { cwd: tempDir() });
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toMatchObject({
      error: { code: 'SOURCE_FAILED', message: expect.stringContaining('No such file: nope.json'), exit_code: 3 },
    });
  });

  it('one broken source among good ones: the good tools, the error, exit 3', async () => {
    const dir = tempDir();
    copyFileSync(join(FIXTURES, 'greet.json'), join(dir, 'greet.json'));
    writeFileSync(join(dir, 'broken.json'), '{"tools": "nope"}');
    const human = await run(['tools', 'greet.json', 'broken.json'], { cwd: dir });
    expect(human.code).toBe(3);
    expect(human.stdout).toContain('greet.greet');
    expect(human.stderr).toMatch(/Source broken failed to load/);
    const json = await run(['tools', 'greet.json', 'broken.json', '--json'], { cwd: dir });
    expect(json.code).toBe(3);
    const body = JSON.parse(json.stdout);
    expect(body.error).toMatchObject({ code: 'SOURCE_FAILED', sources: [{ name: 'broken' }] });
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual(['greet.greet', 'greet.add', 'greet.fail']);
  });

  it('a failed call prints its error object with the code and the suggestion', async () => {
    const r = await run(['call', 'greet.gret', 'greet.json', '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      error: expect.objectContaining({ code: 'TOOL_NOT_FOUND', suggestions: ['greet.greet'], exit_code: 1 }),
    });
    expect(r.stderr).toContain('Did you mean "greet.greet"?');
  });

  it('call --json prints the result as JSON; arguments go in --args', async () => {
    const r = await run(['call', 'greet', 'greet.json', '--args', '{"who":"Ada"}', '--json']);
    expect(r).toMatchObject({ code: 0 });
    expect(JSON.parse(r.stdout)).toBe('hello Ada');
    const old = await run(['call', 'greet', 'greet.json', '{"who":"Ada"}']);
    expect(old.code).toBe(2);
    expect(old.stderr).toContain(`pass them with --args '{"who":"Ada"}'`);
  });
});

describe('help', () => {
  it("lists exactly the options each command's parser accepts", async () => {
    const { COMMAND_NAMES, commandHelp, parserOptions } = await import(BIN);
    for (const command of COMMAND_NAMES as string[]) {
      const help = commandHelp(command) as string;
      const listed = [...help.matchAll(/^ {2}(?:-\w, )?--([\w-]+)/gm)].map((m) => m[1]).sort();
      expect({ command, listed }).toEqual({ command, listed: Object.keys(parserOptions(command)).sort() });
    }
    const chat = commandHelp('chat');
    for (const word of ['--model', '--max-steps', 'ANTHROPIC_API_KEY', 'OPENAI_BASE_URL']) expect(chat).toContain(word);
    expect(commandHelp('serve-mcp')).not.toContain('--json');
  });

  it('the package can be run as `npx utcp-kit`', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.bin).toMatchObject({ utcp: './dist/cli/main.js', 'utcp-kit': './dist/cli/main.js' });
    expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toContain('npx utcp-kit');
  });
});

describe('call arguments and feedback', () => {
  function nestedManual(dir: string) {
    const inputs = {
      type: 'object',
      properties: {
        body: { type: 'object', properties: { title: { type: 'string' }, n: { type: 'integer' } } },
        tags: { type: 'array', items: { type: 'string' } },
      },
    };
    const echo = `node -e 'console.log(JSON.stringify({ body: JSON.parse(process.argv[1]) }))' UTCP_ARG_body_UTCP_END`;
    writeFileSync(
      join(dir, 'm.json'),
      JSON.stringify({
        tools: [
          { name: 'make', inputs, tool_call_template: { call_template_type: 'cli', commands: [{ command: echo }] } },
          {
            name: 'slow',
            inputs: { type: 'object' },
            tool_call_template: { call_template_type: 'cli', commands: [{ command: 'sleep 1.6; echo done' }] },
          },
        ],
      }),
    );
  }

  it('--arg body.title=x builds nested objects, typed by the schema', async () => {
    const dir = tempDir();
    nestedManual(dir);
    const r = await run(['call', 'make', 'm.json', '--arg', 'body.title=007', '--arg', 'body.n=7'], { cwd: dir });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ body: { title: '007', n: 7 } });
  });

  it("a non-JSON value for an object argument points to --arg 'body={...}' and body.name=value", async () => {
    const dir = tempDir();
    nestedManual(dir);
    const r = await run(['call', 'make', 'm.json', '--arg', 'body=title'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `--arg body must be JSON (the tool's schema says object); write --arg 'body={"name":"value"}' or --arg body.name=value`,
    );
  });

  it('shows that a slow call is running, on stderr only', async () => {
    const dir = tempDir();
    nestedManual(dir);
    const r = await run(['call', 'slow', 'm.json'], { cwd: dir, env: { UTCP_PROGRESS: '1' } });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('done\n');
    expect(r.stderr).toContain('… calling m.slow (');
  });
});
