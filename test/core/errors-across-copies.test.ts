/**
 * docs/design/api.md#errors-across-copies. Two copies of the package meet (a plugin bundles one, the app installs
 * another): an error thrown by copy A must be recognised by copy B's `isUtcpError` and `X.isInstance`, although
 * `instanceof` is false across copies. Copy A is the built `dist/`; copy B is the same files copied to a temp dir,
 * so Node loads every module (the error classes included) a second time.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type * as Agent from '../../src/agent/index.js';
import type * as Kit from '../../src/index.js';

const ROOT = resolve(__dirname, '../..');
let dir: string;
let a: typeof Kit;
let b: typeof Kit;
let agentA: typeof Agent;
let agentB: typeof Agent;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'utcp-copies-'));
  cpSync(join(ROOT, 'dist'), join(dir, 'dist'), { recursive: true, filter: (f) => !f.endsWith('.map') });
  // Without its source maps the copy must not point at them (the loader would warn about each file).
  for (const f of readdirSync(join(dir, 'dist'), { recursive: true, encoding: 'utf8' }))
    if (f.endsWith('.js')) {
      const file = join(dir, 'dist', f);
      writeFileSync(file, readFileSync(file, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, ''));
    }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'utcp-kit-copy', type: 'module' }));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  a = (await import(pathToFileURL(join(ROOT, 'dist/index.js')).href)) as typeof Kit;
  b = (await import(pathToFileURL(join(dir, 'dist/index.js')).href)) as typeof Kit;
  agentA = (await import(pathToFileURL(join(ROOT, 'dist/agent/index.js')).href)) as typeof Agent;
  agentB = (await import(pathToFileURL(join(dir, 'dist/agent/index.js')).href)) as typeof Agent;
}, 30_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What `fn` threw (it must throw). */
async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('errors across two copies of the package', () => {
  it('loads two distinct copies (instanceof is false across them, as documented)', () => {
    expect(a.UtcpError).not.toBe(b.UtcpError);
    const e = new a.HttpStatusError(404, 'http://127.0.0.1/x');
    expect(e instanceof a.HttpStatusError).toBe(true);
    expect(e instanceof b.UtcpError).toBe(false);
    expect(e instanceof b.HttpStatusError).toBe(false);
  });

  it("copy B's isUtcpError and X.isInstance recognise every error class of copy A, and only its own ancestors", () => {
    const made: [string, Kit.UtcpError][] = [
      ['UtcpValidationError', new a.UtcpValidationError('manual', [{ path: 'x', message: 'bad' }])],
      ['UtcpArgumentsError', new a.UtcpArgumentsError('t', [])],
      ['ToolNotFoundError', new a.ToolNotFoundError('t')],
      ['UtcpVariableNotFoundError', new a.UtcpVariableNotFoundError('V')],
      ['UtcpLimitError', new a.UtcpLimitError('max', 'too big')],
      ['UrlPolicyError', new a.UrlPolicyError('no')],
      ['HttpStatusError', new a.HttpStatusError(500, 'http://127.0.0.1/')],
      ['ToolExecutionError', new a.ToolExecutionError('failed')],
      ['CliExitError', new a.CliExitError(1, null, '')],
      ['UtcpTimeoutError', new a.UtcpTimeoutError('call', 5)],
      ['UtcpAbortError', new a.UtcpAbortError('call')],
      ['TransportError', new a.TransportError('down')],
      ['McpServerError', new a.McpServerError('s', 'down')],
      ['GraphqlError', new a.GraphqlError('q', [{ message: 'no' }])],
      ['GrpcError', new a.GrpcError('m', 5, 'NOT_FOUND', '')],
      ['RepositoryError', new a.RepositoryError('REPOSITORY_FAILED', 'saveManual', 'failed')],
      ['CircuitOpenError', new a.CircuitOpenError('call', 'http://127.0.0.1:1', new Date(0), false)],
    ];
    const classes = Object.entries(b).filter(
      ([, v]) => typeof v === 'function' && (v === b.UtcpError || v.prototype instanceof b.UtcpError),
    ) as [string, typeof Kit.UtcpError][];
    expect(classes.length).toBe(made.length + 1);
    const wrong: string[] = [];
    for (const [name, error] of made) {
      if (!b.isUtcpError(error)) wrong.push(`isUtcpError(${name}) is false`);
      if (!b.UtcpError.isInstance(error)) wrong.push(`UtcpError.isInstance(${name}) is false`);
      for (const [other, cls] of classes) {
        // Copy B's answer must be what instanceof says within copy A.
        const expected = error instanceof (a as unknown as Record<string, typeof Kit.UtcpError>)[other];
        if (cls.isInstance(error) !== expected) wrong.push(`${other}.isInstance(${name}) is ${!expected}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('subclasses on other entries are recognised too (ModelApiError is an HttpStatusError)', () => {
    const e = new agentA.ModelApiError('openai', 429, 'http://127.0.0.1/v1', '{"error":"slow down"}');
    expect(agentB.ModelApiError.isInstance(e)).toBe(true);
    expect(b.HttpStatusError.isInstance(e)).toBe(true);
    expect(b.TransportError.isInstance(e)).toBe(false);
    expect(agentB.AgentStateError.isInstance(e)).toBe(false);
  });

  it('an error thrown by a real call of copy A narrows with copy B (HTTP 404 from a server on 127.0.0.1)', async () => {
    const server = createServer((_req, res) => res.writeHead(404, { 'content-type': 'text/plain' }).end('gone'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => server.close(() => r())));
    const { port } = server.address() as AddressInfo;
    const client = await a.UtcpClient.create({});
    onTestFinished(() => client.close());
    const manual = {
      tools: [
        {
          name: 'get',
          tool_call_template: { call_template_type: 'http', url: `http://127.0.0.1:${port}/x`, http_method: 'GET' },
        },
      ],
    };
    await client.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: JSON.stringify(manual),
      allowed_communication_protocols: ['text', 'http'],
    } as never);
    const error = await thrown(() => client.callTool('m.get', {}));
    expect(b.HttpStatusError.isInstance(error)).toBe(true);
    if (b.HttpStatusError.isInstance(error)) expect(error.status).toBe(404);
    const missing = await thrown(() => client.callTool('m.nope', {}));
    expect(b.ToolNotFoundError.isInstance(missing)).toBe(true);
    expect(b.isUtcpError(missing) && missing.code).toBe('TOOL_NOT_FOUND');
  });

  it('anything else is not an error of ours, and hostile values do not throw', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        has() {
          throw new Error('trap');
        },
      },
    );
    const trap = {
      get() {
        throw new Error('trap');
      },
    };
    // A marks array whose every read throws (includes, length, elements).
    const forged = { [Symbol.for('utcp-kit.error')]: new Proxy([], trap) };
    const values = [null, undefined, 0, 'UtcpError', new Error('x'), { code: 'TIMEOUT' }, hostile, forged, () => 1];
    for (const v of values) {
      expect(b.isUtcpError(v)).toBe(false);
      expect(b.HttpStatusError.isInstance(v)).toBe(false);
    }
  });
});
