/**
 * Threat model (docs/design/threat-model.md#tools-special-files): the code tools open only regular files, without
 * blocking, and read ignore files only as regular files inside the root, capped. A workspace holds FIFOs (one named
 * `.gitignore`), a character device, and `.gitignore` files that are a link to `/dev/zero`, a link to a file outside,
 * or 2 MiB long. The built package (`dist/`, in a child process, as root and as uid 65534) is attacked with every
 * file tool at once; each call ends with a refusal or a result, memory stays flat, and the host's libuv pool (a
 * file read, a DNS lookup) still answers.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertNodeRunsAs } from '../helpers/unprivileged.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/tools/special-files.mjs', import.meta.url));
const isRoot = process.getuid?.() === 0;

interface Outcome {
  ok: boolean;
  out?: string;
  code?: string;
  error?: string;
  ms: number;
  rssMb: number;
}
interface Report {
  cases: Record<string, Outcome>;
  fsAlive: boolean;
  dnsAlive: boolean;
}

let base: string;
let root: string;
let hasDevices = false;

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'utcp-special-'));
  root = join(base, 'root');
  const outside = join(base, 'outside');
  for (const d of ['dir', 'zdir', 'odir', 'bigdir', 'ddir']) await mkdir(join(root, d), { recursive: true });
  await mkdir(outside);
  const run = (cmd: string, ...args: string[]) => spawnSync(cmd, args).status === 0;
  for (const fifo of ['.gitignore', 'pipe.txt', 'dir/.gitignore']) expect(run('mkfifo', join(root, fifo))).toBe(true);
  // Character devices (1,5 is /dev/zero) can be made only by root.
  hasDevices =
    run('mknod', join(root, 'dev0'), 'c', '1', '5') && run('mknod', join(root, 'ddir/.gitignore'), 'c', '1', '5');
  for (const d of ['dir', 'zdir', 'odir', 'ddir']) await writeFile(join(root, d, 'a.txt'), 'needle\n');
  await symlink('/dev/zero', join(root, 'zdir/.gitignore'));
  await writeFile(join(outside, 'gitignore'), 'secret.txt\n');
  await symlink(join(outside, 'gitignore'), join(root, 'odir/.gitignore'));
  await writeFile(join(root, 'odir/secret.txt'), 'needle\n');
  await writeFile(join(root, 'bigdir/.gitignore'), `${'#'.repeat(1023)}\n`.repeat(2048) + 'late.txt\n');
  await writeFile(join(root, 'bigdir/late.txt'), 'needle\n');
  if (isRoot) expect(run('chown', '-R', '-h', '65534:65534', base)).toBe(true);
}, 30_000);

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

/** Runs the attack fixture on the built package in a child process (killed after 60 s) and returns its report. */
async function attack(ids?: { uid: number; gid: number }): Promise<Report> {
  const child = spawn(process.execPath, [FIXTURE, root], { stdio: ['ignore', 'pipe', 'pipe'], ...ids });
  const kill = setTimeout(() => child.kill('SIGKILL'), 60_000);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.once('close', r));
  clearTimeout(kill);
  expect(code, stderr).toBe(0);
  return JSON.parse(stdout) as Report;
}

function expectSafe(report: Report) {
  const { cases } = report;
  for (const [name, c] of Object.entries(cases)) {
    expect(c.code, `${name}: ${c.error}`).not.toBe('TIMEOUT');
    expect(c.ms, name).toBeLessThan(9_000);
    expect(c.rssMb, name).toBeLessThan(64);
  }
  for (const name of ['read', 'edit', 'append', 'patch', 'grepPipe_builtin', 'grepPipe_ripgrep']) {
    if (!cases[name]) continue;
    expect(cases[name].ok, name).toBe(false);
    expect(cases[name].error, name).toMatch(/not a regular file/);
  }
  if (hasDevices) expect(cases.readDevice.error).toMatch(/not a regular file/);
  for (const name of ['lsRoot', 'lsFifoIgnore', 'lsZeroLink', 'lsDeviceIgnore', 'glob'])
    expect(cases[name].ok, `${name}: ${cases[name].error}`).toBe(true);
  expect(cases.lsFifoIgnore.out).toContain('a.txt');
  expect(cases.lsZeroLink.out).toContain('a.txt');
  // The outside file behind the link did not decide what is hidden; rules past the 1 MiB cap are not used.
  expect(cases.lsOutsideLink.out).toContain('secret.txt');
  expect(cases.lsBig.out).toContain('late.txt');
  for (const name of ['grep_builtin', 'grep_ripgrep']) {
    if (!cases[name]) continue;
    expect(cases[name].out, name).toContain('dir/a.txt:1:needle');
    expect(cases[name].out, name).toContain('odir/secret.txt:1:needle');
  }
  expect(report.fsAlive).toBe(true);
  expect(report.dnsAlive).toBe(true);
}

describe.skipIf(process.platform !== 'linux')('special files in the workspace', () => {
  it('are refused or skipped without blocking the host, as root', { timeout: 90_000 }, async () => {
    expectSafe(await attack());
  });

  it.skipIf(!isRoot)(
    'are refused or skipped without blocking the host, as uid 65534',
    { timeout: 90_000 },
    async () => {
      assertNodeRunsAs(65534, 65534);
      expectSafe(await attack({ uid: 65534, gid: 65534 }));
    },
  );
});
