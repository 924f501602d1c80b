/**
 * Threat model (docs/design/threat-model.md#process-trees): a process started by a cli tool or an MCP stdio server
 * that sheds everything it can (a double fork, a new session, the process-tree marker variable unset:
 * `env -u … setsid … &`) still cannot outlive the call or `close()`: it lives in the child's PID namespace, which
 * the kernel empties when the namespace's init ends. Run through the built package in a child process, as root and
 * as an unprivileged user (user namespace), where this machine can create the namespace.
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { isGone, waitUntilGone } from '../fixtures/cli/harness.js';
import { FIXTURE_DIR } from '../fixtures/mcp/harness.js';
import { pidsWithEnv } from '../helpers/host-processes.js';

const SCRIPT = fileURLToPath(new URL('../fixtures/process-namespace/escape-then-close.mjs', import.meta.url));
const PROBE = fileURLToPath(new URL('../../dist/process/pid-namespace.js', import.meta.url));
const HOSTILE = join(FIXTURE_DIR, 'hostile-server.mjs');
const NOBODY = 65534;
/** Bound on the child's start (node, the package, an MCP server) and on each wait below; 10x a quiet machine's. */
const STEP_MS = 15_000;

/** The wrapper the built package picks when run as `uid` with `path` ('' when none works there). */
function wrapperFor(uid: number | undefined, path: string | undefined): string {
  if (process.platform !== 'linux') return '';
  const r = spawnSync(
    process.execPath,
    ['-e', `import(${JSON.stringify(PROBE)}).then((m) => m.pidNamespace()).then((n) => console.log(n?.tool ?? ''))`],
    {
      encoding: 'utf8',
      timeout: STEP_MS,
      env: { PATH: path },
      ...(uid === undefined ? {} : { uid, gid: uid }),
    },
  );
  return r.status === 0 ? r.stdout.trim() : '';
}

const hasSetsid = spawnSync('sh', ['-c', 'command -v setsid && command -v env']).status === 0;
const isRoot = process.getuid?.() === 0;

/**
 * A PATH directory with what the fixtures run (`env`, `setsid`, `sh`, `sleep`) and bubblewrap, but no `unshare`:
 * the package then takes its third choice. Undefined when bwrap is not installed.
 */
function bwrapOnlyPath(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  const which = (name: string) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  const tools = ['bwrap', 'env', 'setsid', 'sh', 'sleep'].map((name) => [name, which(name)] as const);
  if (tools.some(([, path]) => path === '')) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'utcp-bwrap-only-'));
  chmodSync(dir, 0o755);
  for (const [name, path] of tools) symlinkSync(path, join(dir, name));
  return dir;
}
const bwrapOnly = bwrapOnlyPath();
afterAll(() => {
  if (bwrapOnly) rmSync(bwrapOnly, { recursive: true, force: true });
});

type User = readonly [who: string, uid: number | undefined, path: string | undefined];
const users: User[] = [[isRoot ? 'root' : 'this user', undefined, process.env.PATH]];
if (isRoot) users.push(['an unprivileged user (uid 65534)', NOBODY, process.env.PATH]);
if (bwrapOnly) users.push([`${isRoot ? 'root' : 'this user'}, bwrap only`, undefined, bwrapOnly]);

/** Live `sleep`s carrying `ESCAPE_TOKEN=<token>` but not the process-tree marker: the escapees. */
function unmarked(token: string): number[] {
  return pidsWithEnv(`ESCAPE_TOKEN=${token}`).filter((pid) => {
    try {
      return (
        readFileSync(`/proc/${pid}/comm`, 'latin1').trim() === 'sleep' &&
        !readFileSync(`/proc/${pid}/environ`, 'latin1').includes('__UTCP_PROCESS_TREE=') &&
        !isGone(pid)
      );
    } catch {
      return false;
    }
  });
}

/** Session id of a host pid. */
function sessionOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[3]);
}

async function until<T>(probe: () => T | undefined, what: string): Promise<T> {
  const deadline = Date.now() + STEP_MS;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${STEP_MS} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(process.platform !== 'linux' || !hasSetsid)('process trees in a PID namespace', () => {
  for (const [who, uid, path] of users) {
    const wrapper = wrapperFor(uid, path);
    it.skipIf(wrapper === '')(
      `as ${who} (${wrapper || 'no wrapper'}): a double fork that unsets the marker, from a cli tool and from an MCP stdio server's grandchild, does not outlive close()`,
      async () => {
        const token = randomBytes(8).toString('hex');
        onTestFinished(() => {
          for (const pid of pidsWithEnv(`ESCAPE_TOKEN=${token}`)) {
            try {
              process.kill(pid, 'SIGKILL');
            } catch {
              // gone
            }
          }
        });
        const child = spawn(process.execPath, [SCRIPT], {
          cwd: '/tmp',
          env: { PATH: path, ESCAPE_TOKEN: token, HOSTILE_SERVER: HOSTILE },
          stdio: ['pipe', 'pipe', 'pipe'],
          ...(uid === undefined ? {} : { uid, gid: uid }),
        });
        onTestFinished(() => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
        child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
        const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));

        const ready = await until(() => /^ready (.*)$/m.exec(stdout)?.[1], `the child's ready line (${stderr})`);
        expect(JSON.parse(ready)).toMatchObject({ cli: true, mcp: true, uid: uid ?? process.getuid?.() });
        // One escapee from the cli call, one from the MCP server: both alive, unmarked, in sessions of their own.
        const escaped = await until(() => {
          const pids = unmarked(token);
          return pids.length >= 2 ? pids : undefined;
        }, 'two unmarked escapees');
        for (const pid of escaped) {
          expect(isGone(pid)).toBe(false);
          expect(sessionOf(pid)).not.toBe(sessionOf(child.pid!));
        }

        child.stdin.end('close\n');
        const closed = await until(() => /^closed (.*)$/m.exec(stdout)?.[1], `the child's closed line (${stderr})`);
        const { call, warnings } = JSON.parse(closed) as { call: string; warnings: string[] };
        expect(call).toBe('CLIENT_CLOSED');
        expect(warnings.filter((w) => w.includes('PID namespace'))).toEqual([]);
        for (const pid of escaped) expect(await waitUntilGone(pid, STEP_MS)).toBe(true);
        expect(pidsWithEnv(`ESCAPE_TOKEN=${token}`).filter((pid) => pid !== child.pid && !isGone(pid))).toEqual([]);
        // Nothing of the trees holds the child's event loop: it exits on its own right after close().
        expect(await exited).toBe(0);
      },
      4 * STEP_MS + 10_000,
    );
  }
});

/** A client in a child process whose PATH has neither unshare nor bwrap: two cli calls and an MCP server. */
const FALLBACK_SCRIPT = `
import { UtcpClient } from ${JSON.stringify(new URL('../../dist/index.js', import.meta.url).href)};
const warnings = [];
const logger = { warn: (...a) => warnings.push(a.filter((x) => typeof x === 'string').join(' ')) };
const client = await UtcpClient.create({}, { rootDir: '/tmp', logger, ...(process.argv[1] === 'off' ? { pidNamespaces: false } : {}) });
const tools = [{ name: 'echo', description: '', inputs: { type: 'object', properties: {} },
  tool_call_template: { call_template_type: 'cli', commands: [{ command: 'echo hi' }] } }];
await client.registerManual({ name: 'c', call_template_type: 'text', content: JSON.stringify({ tools }), allowed_communication_protocols: ['cli'] });
const m = await client.registerManual({ name: 'm', call_template_type: 'mcp',
  config: { mcpServers: { h: { command: process.execPath, args: [${JSON.stringify(HOSTILE)}] } } } });
const results = [await client.callTool('c.echo', {}), await client.callTool('c.echo', {}), m.success];
await client.close();
console.log(JSON.stringify({ results, warnings }));
`;

describe.skipIf(process.platform !== 'linux')('without a PID namespace', () => {
  it.each([
    ['warns once per client that the weaker containment applies', 'auto', 1],
    ['says nothing when the client opted out (pidNamespaces: false)', 'off', 0],
  ])(
    '%s',
    (_, mode, expected) => {
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', FALLBACK_SCRIPT, mode], {
        encoding: 'utf8',
        timeout: STEP_MS,
        env: { PATH: '/nonexistent' },
      });
      expect(r.status, r.stderr).toBe(0);
      const { results, warnings } = JSON.parse(r.stdout) as { results: unknown[]; warnings: string[] };
      expect(results).toEqual(['hi', 'hi', true]);
      const about = warnings.filter((w) => w.includes('PID namespace'));
      expect(about).toHaveLength(expected);
      if (expected) expect(about[0]).toMatch(/process group and environment marker only/);
    },
    STEP_MS + 5_000,
  );
});
