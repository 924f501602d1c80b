/**
 * The kernel sandbox (docs/design/code-tools.md#sandbox). CI installs bubblewrap (.ci/run); these tests skip only
 * where the kernel forbids the user namespaces bwrap needs, and say so.
 */
import { createServer, type Server } from 'node:net';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { registerCodeTools } from '../../src/tools/index.js';
import { chooseSandbox } from '../../src/tools/sandbox.js';
import { codeWorkspace, tempDir } from './helpers.js';

const probe =
  process.platform === 'linux'
    ? await chooseSandbox('auto', process.cwd(), '/bin/sh')
    : { mode: 'none' as const, reason: 'not Linux' };
const forbidden = probe.mode === 'none' && (process.platform !== 'linux' || /user namespaces/.test(probe.reason ?? ''));
if (forbidden) process.stderr.write(`[code tools] sandbox tests skipped: ${probe.reason}\n`);

describe.skipIf(forbidden)('bash under bubblewrap', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('is chosen by auto, and required by bwrap (bubblewrap must be installed: apt-get install bubblewrap)', async () => {
    const { tools, client } = await codeWorkspace({}, { sandbox: 'bwrap' });
    expect(tools.sandbox).toBe('bwrap');
    expect((await client.getTool('code.bash'))?.description).toContain(
      'Sandbox: bwrap (workspace read-write but its .git read-only, system read-only, no network)',
    );
  });

  it('writes to the workspace but not outside it, and has a private /tmp', async () => {
    const outside = await tempDir('sandbox-outside-');
    const { root, call } = await codeWorkspace({}, { sandbox: 'bwrap' });
    // A directory of the host outside /tmp is read-only; the host's /tmp is not even visible. /var/tmp rather than
    // this repository: a checkout may itself live under /tmp (CI clones), where the file would just be missing.
    const hostDir = existsSync('/var/tmp') ? '/var/tmp' : process.cwd();
    const repoFile = join(hostDir, `sandbox-escape-${process.pid}.txt`);
    const out = await call('bash', {
      command: `echo inside > made.txt; echo escaped > ${outside}/escaped.txt; echo repo > ${repoFile}; echo etc > /etc/utcp-escape; echo tmp > /tmp/utcp-tmp-escape; cat /tmp/utcp-tmp-escape`,
    });
    expect(await readFile(join(root, 'made.txt'), 'utf8')).toBe('inside\n');
    expect(out).toContain(`${outside}/escaped.txt: No such file or directory`);
    expect(out).toContain(`${repoFile}: Read-only file system`);
    expect(out).toContain('tmp\n');
    await expect(readFile(repoFile)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(out).toContain('/etc/utcp-escape: Read-only file system');
    await expect(readFile(join(outside, 'escaped.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile('/etc/utcp-escape')).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile('/tmp/utcp-tmp-escape')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('cannot connect to a server on the host loopback unless the network is allowed', async () => {
    const connect = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -n1 <&3 && echo CONNECTED`;
    const closed = await codeWorkspace({}, { sandbox: 'bwrap' });
    const before = connections;
    const denied = await closed.call('bash', { command: connect });
    expect(denied).not.toContain('CONNECTED');
    expect(denied).toMatch(/\[exit code [1-9]\d* /);
    expect(connections).toBe(before);
    // The same command with the network allowed reaches the server: the test above can fail.
    const open = await codeWorkspace({}, { sandbox: 'bwrap', network: true });
    expect(await open.call('bash', { command: connect })).toContain('hello\nCONNECTED');
    expect(connections).toBe(before + 1);
  });

  it('stop_process right after the start stops at once, without waiting out the grace period', async () => {
    const { call } = await codeWorkspace({}, { sandbox: 'bwrap', killGraceMs: 60_000 });
    expect(await call('bash', { command: 'sleep 100', run_in_background: true })).toContain('Started process 1');
    // The whole test would time out if the SIGTERM missed a command bwrap had not started yet.
    expect(await call('stop_process', { id: 1 })).toMatch(
      /^stopped process 1 \((SIGTERM|SIGKILL before the command started)\)/,
    );
  });

  it('sees the host environment only through the allow-list', async () => {
    process.env.UTCP_TOOLS_TEST_SECRET = 'hunter2';
    try {
      const { call } = await codeWorkspace({}, { sandbox: 'bwrap', env: { GREETING: 'hi' } });
      expect(await call('bash', { command: 'echo "[$UTCP_TOOLS_TEST_SECRET][$GREETING]"' })).toMatch(/^\[\]\[hi\]\n/);
    } finally {
      delete process.env.UTCP_TOOLS_TEST_SECRET;
    }
  });
});

describe('sandbox selection', () => {
  it('none runs without a sandbox and says so', async () => {
    const { tools, call } = await codeWorkspace({}, { sandbox: 'none' });
    expect(tools.sandbox).toBe('none');
    expect(await call('bash', { command: 'true' })).toMatch(/sandbox none\]$/);
  });

  it('bwrap fails registration with NOT_SUPPORTED when bubblewrap cannot run, registering nothing', async () => {
    const root = await tempDir('sandbox-missing-');
    const client = await UtcpClient.create({});
    try {
      await expect(
        registerCodeTools(client, { root, sandbox: 'bwrap', bwrapPath: join(root, 'no-such-bwrap') }),
      ).rejects.toMatchObject({ code: 'NOT_SUPPORTED' });
      expect(await client.getTools()).toEqual([]);
      // auto without a working sandbox is refused, saying how to get one or opt in (docs/design/code-tools.md#unsandboxed).
      await expect(
        registerCodeTools(client, { root, sandbox: 'auto', bwrapPath: join(root, 'no-such-bwrap') }),
      ).rejects.toMatchObject({
        code: 'NOT_SUPPORTED',
        message: expect.stringMatching(/bubblewrap.*dangerouslyRunUnsandboxed: true/s),
      });
      expect(await client.getTools()).toEqual([]);
      const auto = await registerCodeTools(client, {
        root,
        sandbox: 'auto',
        bwrapPath: join(root, 'no-such-bwrap'),
        dangerouslyRunUnsandboxed: true,
      });
      expect(auto.sandbox).toBe('none');
      expect(auto.sandboxReason).toContain('bwrap does not work here');
    } finally {
      await client.close();
    }
  });
});
