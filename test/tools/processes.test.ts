import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chooseSandbox } from '../../src/tools/sandbox.js';
import { codeWorkspace } from './helpers.js';

/** Live (not zombie) `sleep` processes with `token` in their arguments. */
function livePidsWith(token: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      if (/^[ZX]$/.test(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0])) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, 'latin1').split('\0');
      if (/(^|\/)sleep$/.test(argv[0]) && argv.some((a) => a.includes(token))) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

const bwrapWorks = (await chooseSandbox('auto', process.cwd(), '/bin/sh')).mode === 'bwrap';
const modes = bwrapWorks ? (['none', 'bwrap'] as const) : (['none'] as const);

const DEV_SERVER = `
const http = require('node:http');
const server = http.createServer((req, res) => res.end('hello from ' + req.url));
server.listen(0, '127.0.0.1', () => console.log('listening on ' + server.address().port));
process.on('SIGTERM', () => { console.log('got SIGTERM'); server.close(() => process.exit(0)); });
`;

describe.each(modes)('code.bash (sandbox %s)', (sandbox) => {
  it('returns short output inline with the exit code and the sandbox mode', async () => {
    const { call, client } = await codeWorkspace({ 'a.txt': 'hi\n' }, { sandbox });
    const out = await call('bash', { command: 'cat a.txt; echo oops >&2; exit 3' });
    expect(out).toMatch(new RegExp(`^hi\\noops\\n\\[exit code 3 · \\d+ m?s · sandbox ${sandbox}\\]$`));
    expect((await client.getTool('code.bash'))?.description).toContain(`Sandbox: ${sandbox}`);
  });

  it('keeps the head and the tail of long output', async () => {
    const { call } = await codeWorkspace({}, { sandbox, limits: { inlineOutputBytes: 200 } });
    const out = await call('bash', { command: 'for i in $(seq 1 500); do echo "line $i"; done' });
    expect(out.startsWith('line 1\nline 2\n')).toBe(true);
    expect(out).toMatch(/… \[\d+ bytes omitted\] …/);
    expect(out).toMatch(/line 499\nline 500\n\[exit code 0 · /);
  });

  it('moves a command still running at its timeout to the background and reads on with a cursor', async () => {
    const { call } = await codeWorkspace({}, { sandbox });
    const first = await call('bash', {
      command: 'echo first; read -t 600 line < /dev/zero || true; sleep 600',
      timeout_ms: 300,
    });
    expect(first).toMatch(/^first\n\[still running after 300 ms: moved to the background as process 1\./);
    expect(await call('list_processes', {})).toMatch(/^1\trunning\t/);
    const again = await call('bash_output', { id: 1, cursor: 0 });
    expect(again).toBe('first\n[process 1: running · next cursor 6]');
    expect(await call('bash_output', { id: 1 })).toBe('[process 1: running · next cursor 6]');
    expect(await call('stop_process', { id: 1 })).toBe('stopped process 1 (SIGTERM)');
    expect(await call('list_processes', {})).toMatch(/^1\tstopped with SIGTERM\t/);
  });

  it('runs a dev server in the background, polls it, and stops it', async () => {
    const { call } = await codeWorkspace({ 'server.cjs': DEV_SERVER }, { sandbox, network: true });
    expect(await call('bash', { command: `"${process.execPath}" server.cjs`, run_in_background: true })).toMatch(
      /^Started process 1 in the background/,
    );
    const ready = await call('bash_output', { id: 1, wait_ms: 15_000, wait_for: 'listening on \\d+' });
    const port = Number(/listening on (\d+)/.exec(ready)?.[1]);
    expect(port).toBeGreaterThan(0);
    const response = await fetch(`http://127.0.0.1:${port}/ping`);
    expect(await response.text()).toBe('hello from /ping');
    const stopped = await call('stop_process', { id: 1 });
    expect(stopped).toBe('stopped process 1 (SIGTERM)\nlast output:\ngot SIGTERM\n');
    await expect(fetch(`http://127.0.0.1:${port}/ping`)).rejects.toThrow();
  });

  it('escalates to SIGKILL after the grace period for a process that ignores SIGTERM', async () => {
    const { call } = await codeWorkspace({}, { sandbox });
    await call('bash', {
      command: "trap '' TERM; echo armed; while true; do sleep 0.05; done",
      run_in_background: true,
    });
    await call('bash_output', { id: 1, wait_ms: 15_000, wait_for: 'armed' });
    expect(await call('stop_process', { id: 1, grace_ms: 300 })).toMatch(/^stopped process 1 \(SIGKILL after 300 ms\)/);
  });

  it('client.close() leaves no process behind (background, children, and a setsid escapee)', async () => {
    const { call, client } = await codeWorkspace({}, { sandbox });
    const token = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    await call('bash', {
      command: `sleep 6${token} & setsid sleep 7${token} & echo started; wait`,
      run_in_background: true,
    });
    await call('bash_output', { id: 1, wait_ms: 15_000, wait_for: 'started' });
    await call('bash', { command: `sleep 8${token}`, timeout_ms: 100 });
    // Wait until all three sleeps are visible on the host, then close.
    for (let i = 0; livePidsWith(token).length < 3 && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
    expect(livePidsWith(token)).toHaveLength(3);
    await client.close();
    expect(livePidsWith(token)).toEqual([]);
  });

  it('stops the command when the call is aborted', async () => {
    const { client } = await codeWorkspace({}, { sandbox });
    const token = `${Date.now()}${Math.floor(Math.random() * 1e6)}`;
    const controller = new AbortController();
    const call = client.callTool('code.bash', { command: `echo go; sleep 9${token}` }, { signal: controller.signal });
    for (let i = 0; livePidsWith(token).length < 1 && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
    controller.abort();
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    for (let i = 0; livePidsWith(token).length > 0 && i < 400; i++) await new Promise((r) => setTimeout(r, 25));
    expect(livePidsWith(token)).toEqual([]);
  });
});

describe('the output ring buffer', () => {
  it('keeps the last bytes, says how many were dropped, and pages from a cursor', async () => {
    const { call } = await codeWorkspace({}, { limits: { processBufferBytes: 100, inlineOutputBytes: 40 } });
    await call('bash', { command: 'printf "%0999d\\n" 0; echo done', run_in_background: true });
    const first = await call('bash_output', { id: 1, cursor: 0, wait_ms: 15_000, wait_for: 'done' });
    // 1005 bytes in all; the ring holds the last 100 (from 905); a read returns at most 40.
    expect(first).toMatch(
      /^0{40}\n\[process 1: (running|exit code 0) · next cursor 945 · 905 older bytes were dropped from the buffer · more output is waiting/,
    );
    await call('bash_output', { id: 1, cursor: 1005, wait_ms: 15_000 });
    expect(await call('bash_output', { id: 1, cursor: 945 })).toBe(
      `${'0'.repeat(40)}\n[process 1: exit code 0 · next cursor 985 · more output is waiting: call again with the next cursor]`,
    );
    expect(await call('bash_output', { id: 1 })).toBe(
      `${'0'.repeat(14)}\ndone\n[process 1: exit code 0 · next cursor 1005]`,
    );
  });
});

describe('the command policy', () => {
  it('refuses obviously destructive commands whatever the sandbox', async () => {
    const { fail } = await codeWorkspace();
    for (const command of [
      'rm -rf /',
      'rm -rf / --no-preserve-root',
      'sudo rm -fr /*',
      'rm -rf ~',
      'rm -r -f $HOME',
      'rm -rf /usr',
      'mkfs.ext4 /dev/sda1',
      'dd if=/dev/zero of=/dev/sda',
      ':(){ :|:& };:',
      'echo ok; shutdown -h now',
    ]) {
      expect(await fail('bash', { command }), command).toContain('command refused by the command policy');
    }
  });

  it('lets ordinary removals inside the workspace run', async () => {
    const { root, call } = await codeWorkspace({ 'build/x.js': '' });
    expect(await call('bash', { command: 'rm -rf build ./tmp && ls' })).toMatch(/^\[exit code 0/);
    await expect(readFile(join(root, 'build/x.js'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});
