/**
 * The client's entry points that must not be misread (issue 11): create() with a config path, limits validation,
 * max_redirects 0, typed results, `await using`, loggers of both common shapes, NODE_DEBUG, and require().
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it, onTestFinished } from 'vitest';
import { UtcpClient, UtcpError, type Logger } from '../../src/index.js';

const ROOT = resolve(__dirname, '../..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'utcp-api-'));
  writeFileSync(
    join(dir, 'tools.json'),
    JSON.stringify({ tools: [{ name: 'hello', tool_call_template: { call_template_type: 'text', content: 'hi' } }] }),
  );
  writeFileSync(
    join(dir, 'utcp.config.yaml'),
    'manual_call_templates:\n  - name: local\n    call_template_type: file\n    file_path: tools.json\n    allowed_communication_protocols: [text]\n',
  );
  mkdirSync(join(dir, 'sub'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('UtcpClient.create', () => {
  it('loads a config file given as the only argument (relative to options.rootDir)', async () => {
    const client = await UtcpClient.create('utcp.config.yaml', { rootDir: dir });
    onTestFinished(() => client.close());
    expect(client.initialRegistrations.map((r) => r.success)).toEqual([true]);
    expect((await client.getTools()).map((t) => t.name)).toEqual(['local.hello']);
  });

  it("takes the official SDK's create(rootDir, config?) when the first argument is a directory (docs/design/api.md#create-forms)", async () => {
    const rooted = await UtcpClient.create(join(dir, 'sub'));
    onTestFinished(() => rooted.close());
    expect(await rooted.getTools()).toEqual([]);
    await expect(UtcpClient.create('missing.yaml', { rootDir: dir })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('Cannot read config file'),
    });
    // A directory first: the config (here a path, relative to that directory) second, our options third.
    const official = UtcpClient.create as unknown as (...a: unknown[]) => Promise<UtcpClient>;
    const client = await official(dir, 'utcp.config.yaml', {});
    onTestFinished(() => client.close());
    expect((await client.getTools()).map((t) => t.name)).toEqual(['local.hello']);
    // Three arguments whose first is not a directory are still refused rather than guessed.
    await expect(official('utcp.config.yaml', {}, {})).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('options.rootDir'),
    });
  });
});

describe('limits', () => {
  it.each([
    [{ max_redirects: -1 }, 'limits.max_redirects: expected an integer ≥ 0, got -1'],
    [{ max_response_bytes: 0 }, 'limits.max_response_bytes: expected an integer ≥ 1, got 0'],
    [{ max_document_bytes: '1mb' }, 'limits.max_document_bytes: expected an integer ≥ 1, got "1mb"'],
    [{ max_redirect: 2 }, 'limits.max_redirect: unknown limit'],
  ])('rejects %j with INVALID_CONFIG naming the key', async (limits, message) => {
    const error = await UtcpClient.create({ limits } as never).catch((e) => e);
    expect(error).toBeInstanceOf(UtcpError);
    expect(error.code).toBe('INVALID_CONFIG');
    expect(error.message).toContain(message);
  });

  describe('max_redirects: 0 never follows a redirect', () => {
    let server: Server;
    let base: string;
    beforeAll(async () => {
      server = createServer((req, res) => {
        if (req.url === '/moved') res.writeHead(302, { location: '/manual' }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tools: [] }));
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('keeps 0 (not the default 5) and refuses the first 3xx; 1 follows it', async () => {
      const never = await UtcpClient.create({ limits: { max_redirects: 0 } });
      onTestFinished(() => never.close());
      const refused = await never.registerManual({ name: 'm', call_template_type: 'http', url: `${base}/moved` });
      expect(refused.success).toBe(false);
      expect(refused.errors[0]).toMatch(/redirects are off \(limits\.max_redirects is 0\)/);
      const once = await UtcpClient.create({ limits: { max_redirects: 1 } });
      onTestFinished(() => once.close());
      expect((await once.registerManual({ name: 'm', call_template_type: 'http', url: `${base}/moved` })).success).toBe(
        true,
      );
    });
  });
});

describe('results, disposal and logging', () => {
  it('types callTool results for the caller', async () => {
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());
    await client.registerFunctions('calc', [{ name: 'add', handler: ({ a, b }) => (a as number) + (b as number) }]);
    const sum = await client.callTool<number>('calc.add', { a: 2, b: 3 });
    expectTypeOf(sum).toEqualTypeOf<number>();
    expect(sum).toBe(5);
    expectTypeOf(client.callTool('calc.add', {})).toEqualTypeOf<Promise<unknown>>();
  });

  it('closes the client at the end of an `await using` scope', async () => {
    let escaped: UtcpClient;
    {
      await using client = await UtcpClient.create();
      escaped = client;
      await client.registerFunctions('f', [{ name: 'one', handler: () => 1 }]);
      expect(await client.callTool('f.one', {})).toBe(1);
    }
    await expect(escaped.callTool('f.one', {})).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it('keeps structured fields with pino-style (fields, message) and console-style (message, ...data) loggers', async () => {
    const pinoLike: unknown[][] = [];
    const pino: Logger = { warn: (...a: unknown[]) => void pinoLike.push(a), info: () => {} };
    const client = await UtcpClient.create(
      { manual_call_templates: [{ name: 'bad', call_template_type: 'http' }] },
      { logger: pino },
    );
    onTestFinished(() => client.close());
    const withFields = pinoLike.find((a) => typeof a[0] === 'object');
    expect(withFields).toEqual([
      { errors: ['Invalid manual call template: url: required'] },
      'Manual bad failed to register',
    ]);

    const printed: unknown[][] = [];
    const consoleLike = { warn: (...data: unknown[]) => void printed.push(data) } satisfies Logger;
    const c2 = await UtcpClient.create(
      { manual_call_templates: [{ name: 'bad', call_template_type: 'http' }] },
      { logger: consoleLike },
    );
    onTestFinished(() => c2.close());
    expect(printed.flat()).toContainEqual({ errors: ['Invalid manual call template: url: required'] });
  });
});

function runNode(code: string, env: NodeJS.ProcessEnv = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', code],
      { cwd: ROOT, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => (err ? rej(Object.assign(err, { stderr })) : res({ stdout, stderr })),
    );
  });
}

describe('the built package', () => {
  const script = `const { UtcpClient } = await import('utcp-kit');
const c = await UtcpClient.create({ manual_call_templates: [{ name: 'bad', call_template_type: 'http' }] });
await c.close();`;

  it('prints nothing by default and writes debug lines to stderr with NODE_DEBUG=utcp-kit', async () => {
    const quiet = await runNode(script, { NODE_DEBUG: '' });
    expect(quiet.stdout + quiet.stderr).toBe('');
    const loud = await runNode(script, { NODE_DEBUG: 'utcp-kit' });
    expect(loud.stdout).toBe('');
    expect(loud.stderr).toMatch(
      /UTCP-KIT \d+: warn Manual bad failed to register \{"errors":\["Invalid manual call template: url: required"\]\}/,
    );
  });

  it.runIf(process.features.require_module)(
    'can be loaded with require() (exports have a default condition)',
    async () => {
      const { stdout } = await runNode(`import { createRequire } from 'node:module';
const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))});
const kit = require('utcp-kit');
const openapi = require('utcp-kit/loaders/openapi');
process.stdout.write(typeof kit.UtcpClient + ' ' + typeof openapi.convertOpenApiDocument);`);
      expect(stdout).toBe('function function');
    },
  );
});
