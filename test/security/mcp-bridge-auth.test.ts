/**
 * Issue #24 item 5: the MCP bridge over HTTP is a door to every served tool (with `--code-tools`, a shell).
 * Attacks run against the built package (docs/design/threat-model.md#mcp-bridge-auth): the library's `serveMcp` from
 * `dist/mcp/` in this process (we are root), an attacker process running as an unprivileged user (uid 65534), and
 * the built `utcp serve-mcp --http` in a child. Hosts are the official MCP SDK client.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { assertNodeRunsAs } from '../helpers/unprivileged.js';
import type * as SrcMcp from '../../src/mcp/index.js';
import { UtcpClient, UtcpError } from './packed.js';

const { serveMcp } = (await import(new URL('../../dist/mcp/index.js', import.meta.url).href)) as typeof SrcMcp;
const BIN = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));
/** Every wait below polls or waits on an event, and gives up long after the expected time. */
const DEADLINE_MS = 15_000;

type Handle = SrcMcp.McpBridgeHandle;

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One raw HTTP request to the bridge (an attacker needs no SDK). */
function send(url: string, method: string, headers: Record<string, string>, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent: false,
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        signal: AbortSignal.timeout(DEADLINE_MS),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

/** Opens a session with a raw initialize; returns its id. */
async function openRawSession(url: string, headers: Record<string, string>): Promise<string> {
  const reply = await send(url, 'POST', headers, INITIALIZE);
  expect(reply.status).toBe(200);
  const id = reply.headers['mcp-session-id'];
  expect(typeof id).toBe('string');
  return id as string;
}

/** The status of a ping on a session: 200 while it lives, 404 once closed. */
async function pingStatus(url: string, headers: Record<string, string>, session: string): Promise<number> {
  return (await send(url, 'POST', { ...headers, 'mcp-session-id': session }, PING)).status;
}

/**
 * Waits until a session has been closed for idleness. Every ping is activity that restarts the session's idle clock,
 * so pings are spaced ever further apart (2, 4, 8... idle periods): one of them comes after an expiry.
 */
async function waitForExpiry(url: string, headers: Record<string, string>, session: string, idleMs: number) {
  const end = Date.now() + DEADLINE_MS;
  for (let gap = idleMs * 2; ; gap *= 2) {
    await new Promise((r) => setTimeout(r, Math.min(gap, Math.max(0, end - Date.now()))));
    const status = await pingStatus(url, headers, session);
    if (status === 404) return;
    if (Date.now() >= end) throw new Error(`the session idle for ${idleMs} ms was never closed (last ping: ${status})`);
  }
}

async function waitUntil(check: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + DEADLINE_MS;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const bearer = (token: string | undefined) => ({ authorization: `Bearer ${token}` });

/** A client with a tool that records that it ran, served over HTTP by the built bridge. */
async function startBridge(transport: Partial<SrcMcp.McpHttpTransportOptions> = {}) {
  const ran: string[] = [];
  const holds: Array<() => void> = [];
  const logged: string[] = [];
  const log = (...args: unknown[]) => void logged.push(JSON.stringify(args));
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  await client.registerFunctions('host', [
    {
      name: 'run',
      description: 'Stands for code.bash: anything that reaches it ran a command',
      inputs: { type: 'object', properties: { cmd: { type: 'string' } } },
      handler: ({ cmd }) => (ran.push(String(cmd)), { ok: true }),
    },
    {
      name: 'hold',
      description: 'Runs until released',
      handler: (_args, { signal }) =>
        new Promise((resolve, reject) => {
          holds.push(() => resolve('released'));
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    },
  ]);
  const handle = await serveMcp(
    client,
    { transport: 'http', ...transport },
    { logger: { debug: log, info: log, warn: log, error: log } },
  );
  onTestFinished(() => handle.close());
  return { handle, ran, logged, holds };
}

async function sdkClient(handle: Handle, headers?: Record<string, string>) {
  const transport = new StreamableHTTPClientTransport(new URL(handle.url!), { requestInit: { headers } });
  const mcp = new Client({ name: 'auth-test', version: '1.0.0' });
  onTestFinished(() => mcp.close());
  await mcp.connect(transport);
  return { mcp, transport };
}

describe('serveMcp over HTTP requires a bearer token by default (library, built dist/)', () => {
  it('generates a strong token, exposed on the handle only, never logged nor enumerable', async () => {
    const a = await startBridge();
    const b = await startBridge();
    expect(a.handle.token).toMatch(/^[A-Za-z0-9_-]{43}$/); // 32 random bytes, base64url
    expect(b.handle.token).not.toBe(a.handle.token);
    expect(Object.keys(a.handle)).not.toContain('token');
    expect(JSON.stringify(a.handle)).not.toContain(a.handle.token);
    const { mcp } = await sdkClient(a.handle, bearer(a.handle.token));
    await mcp.callTool({ name: 'host.run', arguments: { cmd: 'ok' } });
    await send(a.handle.url!, 'POST', bearer('wrong-token-0123456789'), INITIALIZE);
    expect(a.logged.join('\n')).not.toContain(a.handle.token);
  });

  it('no token: 401 with a Bearer challenge and a JSON-RPC error, no session, the tool never reached', async () => {
    const { handle, ran } = await startBridge();
    const reply = await send(handle.url!, 'POST', {}, INITIALIZE);
    expect(reply.status).toBe(401);
    expect(reply.headers['www-authenticate']).toMatch(/^Bearer realm=/);
    expect(reply.headers['mcp-session-id']).toBeUndefined();
    expect(JSON.parse(reply.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 }, id: null });
    // The SDK client without the token cannot connect at all.
    const transport = new StreamableHTTPClientTransport(new URL(handle.url!));
    const mcp = new Client({ name: 'no-token', version: '1' });
    onTestFinished(() => mcp.close());
    await expect(mcp.connect(transport)).rejects.toThrow(/401|Unauthorized/);
    expect(ran).toEqual([]);
  });

  it('a wrong token (any length, another scheme, in the query) is refused with invalid_token', async () => {
    const { handle, ran } = await startBridge();
    const token = handle.token!;
    const attempts: Array<[string, Record<string, string>]> = [
      [handle.url!, bearer('x')],
      [handle.url!, bearer(`${token}x`)],
      [handle.url!, bearer(token.slice(0, -1))],
      [handle.url!, bearer(`${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`)],
      [handle.url!, { authorization: `Basic ${Buffer.from(`u:${token}`).toString('base64')}` }],
      [handle.url!, { authorization: token }],
      [`${handle.url}?token=${token}`, {}],
      [`${handle.url}?access_token=${token}`, {}],
    ];
    for (const [url, headers] of attempts) {
      const reply = await send(url, 'POST', headers, INITIALIZE);
      expect(reply.status, JSON.stringify(headers)).toBe(401);
      expect(reply.headers['mcp-session-id']).toBeUndefined();
    }
    const wrong = await send(handle.url!, 'POST', bearer('a-wrong-token-of-some-length'), INITIALIZE);
    expect(wrong.headers['www-authenticate']).toMatch(/error="invalid_token"/);
    expect(ran).toEqual([]);
  });

  it('a live session id is not a credential: every request needs the token', async () => {
    const { handle, ran } = await startBridge();
    const { transport } = await sdkClient(handle, bearer(handle.token));
    const session = transport.sessionId!;
    const call = { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'host.run', arguments: { cmd: 'x' } } };
    for (const method of ['POST', 'GET', 'DELETE']) {
      const reply = await send(
        handle.url!,
        method,
        { 'mcp-session-id': session },
        method === 'POST' ? call : undefined,
      );
      expect(reply.status, method).toBe(401);
    }
    expect(ran).toEqual([]);
    expect(await pingStatus(handle.url!, bearer(handle.token), session)).toBe(200);
  });

  it('the right token: list and call work; unauthenticated floods create no session and leave the host responsive', async () => {
    // One session allowed: had any refused request created a session, the cap would have evicted the host's.
    const { handle, ran } = await startBridge({ maxSessions: 1 });
    const { mcp } = await sdkClient(handle, bearer(handle.token));
    const flood = await Promise.all(
      Array.from({ length: 100 }, (_, i) =>
        send(handle.url!, 'POST', i % 2 ? {} : bearer(`wrong-token-number-${i}`), INITIALIZE),
      ),
    );
    expect(new Set(flood.map((r) => r.status))).toEqual(new Set([401]));
    expect((await mcp.listTools()).tools.map((t) => t.name)).toEqual(['host.run', 'host.hold']);
    expect((await mcp.callTool({ name: 'host.run', arguments: { cmd: 'authorised' } })).structuredContent).toEqual({
      ok: true,
    });
    expect(ran).toEqual(['authorised']);
  });

  it('auth: { token } uses the caller token; a weak or malformed one is INVALID_CONFIG without echoing it', async () => {
    const token = 'caller-chosen-token-0123456789';
    const { handle } = await startBridge({ auth: { token } });
    expect(handle.token).toBe(token);
    const { mcp } = await sdkClient(handle, bearer(token));
    expect((await mcp.listTools()).tools).toHaveLength(2);
    expect((await send(handle.url!, 'POST', bearer(`${token}-not`), INITIALIZE)).status).toBe(401);

    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    for (const bad of ['short-secret', 'a token with spaces in it', 'x'.repeat(2000), '']) {
      const error = await serveMcp(client, { transport: 'http', auth: { token: bad } }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UtcpError);
      expect(error).toMatchObject({ code: 'INVALID_CONFIG' });
      if (bad) expect((error as Error).message).not.toContain(bad);
    }
    for (const options of [{ maxSessions: 0 }, { sessionIdleTimeoutMs: -1 }, { sessionIdleTimeoutMs: 2 ** 40 }]) {
      await expect(serveMcp(client, { transport: 'http', ...options })).rejects.toMatchObject({
        code: 'INVALID_CONFIG',
      });
    }
  });

  it("auth: 'none' accepts hosts without a token, and the handle has none", async () => {
    const { handle } = await startBridge({ auth: 'none' });
    expect(handle.token).toBeUndefined();
    const { mcp } = await sdkClient(handle);
    expect((await mcp.callTool({ name: 'host.run', arguments: { cmd: 'open' } })).isError).toBeFalsy();
  });

  it('an unprivileged local user (uid 65534 when run as root) without the token is refused', async () => {
    const { handle, ran } = await startBridge();
    // The attacker process knows the URL, not the token; it also guesses one.
    const script = `
      const url = process.argv[1];
      const init = JSON.stringify(${JSON.stringify(INITIALIZE)});
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      const none = await fetch(url, { method: 'POST', headers, body: init });
      const guess = await fetch(url, { method: 'POST', headers: { ...headers, authorization: 'Bearer guessed-token-guessed' }, body: init });
      process.stdout.write(JSON.stringify({ uid: process.getuid(), statuses: [none.status, guess.status], session: none.headers.get('mcp-session-id') }));
    `;
    // As root we drop to nobody; run unprivileged, the test process already is another user's attacker.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) assertNodeRunsAs(65534, 65534);
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, handle.url!], {
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      cwd: '/',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onTestFinished(() => void (child.exitCode === null && child.kill('SIGKILL')));
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c));
    child.stderr!.on('data', (c: Buffer) => (err += c));
    const code = await exitCode(child);
    expect(code, err).toBe(0);
    expect(JSON.parse(out)).toEqual({ uid: asRoot ? 65534 : process.getuid?.(), statuses: [401, 401], session: null });
    expect(ran).toEqual([]);
  });
});

describe('serveMcp over HTTP bounds its sessions (library, built dist/)', () => {
  it('past maxSessions the least recently used idle session is closed; all busy: 503', async () => {
    const { handle, holds } = await startBridge({ maxSessions: 2 });
    const auth = bearer(handle.token);
    const first = await openRawSession(handle.url!, auth);
    const second = await openRawSession(handle.url!, auth);
    expect(await pingStatus(handle.url!, auth, first)).toBe(200); // `second` is now the least recently used
    const third = await openRawSession(handle.url!, auth);
    expect(await pingStatus(handle.url!, auth, second)).toBe(404);
    expect(await pingStatus(handle.url!, auth, first)).toBe(200);
    expect(await pingStatus(handle.url!, auth, third)).toBe(200);

    // Both sessions busy (a call running on each): a new one is refused, nothing is evicted.
    const holdCall = (session: string, id: number) =>
      send(
        handle.url!,
        'POST',
        { ...auth, 'mcp-session-id': session },
        {
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'host.hold', arguments: {} },
        },
      );
    const calls = [holdCall(first, 10), holdCall(third, 11)];
    await waitUntil(async () => holds.length === 2, 'both calls to start');
    const refused = await send(handle.url!, 'POST', auth, INITIALIZE);
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toMatchObject({
      error: { message: expect.stringMatching(/Too many MCP sessions/) },
    });
    for (const release of holds) release();
    for (const call of await Promise.all(calls)) expect(call.body).toContain('released');
    expect(await pingStatus(handle.url!, auth, first)).toBe(200);
    expect(await pingStatus(handle.url!, auth, third)).toBe(200);
  });

  it('an idle session expires; a running call or an open event stream keeps it alive', async () => {
    const idleMs = 300;
    const { handle, holds, logged } = await startBridge({ sessionIdleTimeoutMs: idleMs });
    const auth = bearer(handle.token);

    // A host that went away without DELETE (the SDK client's close() ends its streams, not its session).
    const { mcp, transport } = await sdkClient(handle, auth);
    const abandoned = transport.sessionId!;
    await mcp.close();
    await waitUntil(async () => logged.some((l) => l.includes('closing an idle session')), 'the idle session to close');
    expect(await pingStatus(handle.url!, auth, abandoned)).toBe(404);

    // A call running for several idle periods completes on its session, which lives on.
    const busy = await openRawSession(handle.url!, auth);
    const started = Date.now();
    const call = send(
      handle.url!,
      'POST',
      { ...auth, 'mcp-session-id': busy },
      {
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'host.hold', arguments: {} },
      },
    );
    await waitUntil(async () => holds.length === 1 && Date.now() - started > idleMs * 3, 'a long call');
    holds[0]();
    expect((await call).body).toContain('released');

    // A host listening on its GET event stream is connected, not idle.
    const listening = await openRawSession(handle.url!, auth);
    const stream = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const req = request(handle.url!, {
        agent: false,
        headers: { ...auth, accept: 'text/event-stream', 'mcp-session-id': listening },
      });
      req.on('response', resolve).on('error', reject).end();
      onTestFinished(() => void req.destroy());
    });
    expect(stream.statusCode).toBe(200);
    await new Promise((r) => setTimeout(r, idleMs * 4));
    expect(await pingStatus(handle.url!, auth, listening)).toBe(200);
    stream.destroy();
  });
});

// --- the built CLI -----------------------------------------------------------------------------------------------

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  stdout: () => string;
}

function exitCode(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('child did not exit')), DEADLINE_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-bridge-auth-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'notes.txt'), 'hello from the workspace\n');
  return dir;
}

/** `utcp serve-mcp --http --code-tools <dir>` (the case of the issue: a shell for whoever connects). */
async function serveCli(dir: string, args: string[], env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'serve-mcp', '--http', '--code-tools', '.', ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH!, HOME: dir, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exitCode(child).catch(() => {});
  });
  let stderr = '';
  let stdout = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve-mcp did not start: ${stderr}`)), DEADLINE_MS);
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      // Everything the CLI prints at start is written before the listener is announced as ready for hosts.
      const m = /over MCP at (\S+)[^\n]*\n[^\n]*\n/.exec(stderr);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve-mcp exited with ${code}: ${stderr}`));
    });
  });
  return { child, url, stderr: () => stderr, stdout: () => stdout };
}

async function cliClient(url: string, headers?: Record<string, string>) {
  const mcp = new Client({ name: 'cli-auth-test', version: '1.0.0' });
  onTestFinished(() => mcp.close());
  await mcp.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return mcp;
}

describe('utcp serve-mcp --http (built CLI)', () => {
  it('generates a token, prints it once to stderr, requires it; --code-tools unreachable without it', async () => {
    const dir = workspace();
    const served = await serveCli(dir, []);
    const token = /bearer token.*: (\S+)$/m.exec(served.stderr())?.[1];
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(served.stderr().split(token!).length - 1).toBe(1);

    const attack = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'code.bash', arguments: { command: 'touch pwned' } },
    };
    expect((await send(served.url, 'POST', {}, INITIALIZE)).status).toBe(401);
    expect((await send(served.url, 'POST', {}, attack)).status).toBe(401);
    expect((await send(served.url, 'POST', bearer('not-the-token-0123456789'), INITIALIZE)).status).toBe(401);
    await expect(cliClient(served.url)).rejects.toThrow(/401|Unauthorized/);

    const mcp = await cliClient(served.url, bearer(token));
    expect((await mcp.listTools()).tools.map((t) => t.name)).toContain('code.bash');
    const read = await mcp.callTool({ name: 'code.read', arguments: { path: 'notes.txt' } });
    expect(JSON.stringify(read.content)).toContain('hello from the workspace');
    expect(existsSync(join(dir, 'pwned'))).toBe(false);
    expect(served.stderr().split(token!).length - 1).toBe(1);
    expect(served.stdout()).not.toContain(token);
  });

  it('takes UTCP_MCP_TOKEN when set and never prints it', async () => {
    const token = 'from-the-environment-0123456789';
    const served = await serveCli(workspace(), [], { UTCP_MCP_TOKEN: token });
    expect(served.stderr()).not.toContain(token);
    expect(served.stderr()).toContain('UTCP_MCP_TOKEN');
    expect((await send(served.url, 'POST', bearer('generated-looking-token-xyz'), INITIALIZE)).status).toBe(401);
    const mcp = await cliClient(served.url, bearer(token));
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('--no-auth accepts hosts without a token and says so', async () => {
    const served = await serveCli(workspace(), ['--no-auth']);
    expect(served.stderr()).toMatch(/--no-auth: any local process or user can call these tools/);
    expect(served.stderr()).not.toMatch(/bearer token/);
    const mcp = await cliClient(served.url);
    expect((await mcp.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('--max-sessions and --session-idle bound the sessions', async () => {
    const served = await serveCli(workspace(), ['--no-auth', '--max-sessions', '1', '--session-idle', '60000']);
    const first = await openRawSession(served.url, {});
    const second = await openRawSession(served.url, {});
    expect(await pingStatus(served.url, {}, first)).toBe(404); // evicted by the cap of 1
    expect(await pingStatus(served.url, {}, second)).toBe(200);

    const idle = await serveCli(workspace(), ['--no-auth', '--session-idle', '200']);
    const session = await openRawSession(idle.url, {});
    await waitForExpiry(idle.url, {}, session, 200);
  });

  it('refuses contradictory or malformed settings with a usage error, never echoing the token', async () => {
    const dir = workspace();
    const run = async (args: string[], env: Record<string, string> = {}) => {
      const child = spawn(process.execPath, [BIN, 'serve-mcp', ...args], {
        cwd: dir,
        env: { PATH: process.env.PATH!, HOME: dir, NO_COLOR: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr!.on('data', (c: Buffer) => (err += c));
      return { code: await exitCode(child), err };
    };
    const weak = await run(['--http'], { UTCP_MCP_TOKEN: 'weak-secret' });
    expect(weak.code).toBe(2);
    expect(weak.err).toMatch(/UTCP_MCP_TOKEN must be 16 to 1024/);
    expect(weak.err).not.toContain('weak-secret');
    expect((await run(['--http', '--no-auth'], { UTCP_MCP_TOKEN: 'a-strong-enough-token-123' })).code).toBe(2);
    expect((await run(['--no-auth'])).code).toBe(2);
    expect((await run(['--http', '--max-sessions', '0'])).code).toBe(2);
    expect((await run(['--stateless'])).err).toMatch(/--stateless: only with --http/);
    const both = await run(['--http', '--stateless', '--session-idle', '5000']);
    expect(both.code).toBe(2);
    expect(both.err).toMatch(/--stateless keeps none/);
    const help = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'serve-mcp', '--help'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout!.on('data', (c: Buffer) => (out += c));
      child.once('close', () => resolve(out));
    });
    for (const flag of ['--no-auth', '--stateless', '--max-sessions <n>', '--session-idle <ms>', 'UTCP_MCP_TOKEN'])
      expect(help).toContain(flag);
  });
});
