/**
 * Threat model (docs/design/threat-model.md#tools-descriptor-walk): every path operation of the code tools acts on
 * what was checked. While another process swaps a workspace directory for a symbolic link to a directory outside
 * (and back), the built package's grep (built-in and ripgrep), glob, ls, write (with new parent directories) and
 * apply_patch's delete run round after round, bounded by count and time: nothing outside is read, listed,
 * created or deleted (leaks counted, must be 0), and the race is shown to be exercised. The same attack runs
 * once more in a child process as uid 65534 (test/fixtures/tools/race.mjs).
 */
import { spawn, spawnSync } from 'node:child_process';
import { access, chown, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { assertNodeRunsAs } from '../helpers/unprivileged.js';
import type * as Tools from '../../src/tools/index.js';
import { UtcpClient } from './packed.js';

const { registerCodeTools } = (await import(
  new URL('../../dist/tools/index.js', import.meta.url).href
)) as typeof Tools;

const hasRipgrep = spawnSync('rg', ['--version']).status === 0;

const RACER = fileURLToPath(new URL('../fixtures/tools/racer.cjs', import.meta.url));

const ROUNDS = 200;
const BUDGET_MS = 15_000;

let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
});

async function setup(ripgrep: string | false | undefined) {
  const base = await mkdtemp(join(tmpdir(), 'utcp-tools-race-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  await mkdir(join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  await writeFile(join(root, 'sub', 'file.txt'), 'INSIDE-MARKER\n');
  await writeFile(join(root, 'sub', 'victim.txt'), 'x\n');
  await writeFile(join(outside, 'file.txt'), 'LEAK-MARKER\n');
  await writeFile(join(outside, 'outside-only.txt'), 'LEAK-MARKER\n');
  await writeFile(join(outside, 'victim.txt'), 'x\n');
  const client = await UtcpClient.create({});
  await registerCodeTools(client, {
    root,
    sandbox: 'none',
    ripgrep,
    tools: ['grep', 'glob', 'ls', 'write', 'apply_patch'],
  });
  const racer = spawn(process.execPath, [RACER, root, outside], { stdio: 'ignore' });
  const racerDone = new Promise<void>((r) => racer.once('exit', () => r()));
  stop = async () => {
    racer.kill('SIGKILL');
    await racerDone;
    await client.close();
    await rm(base, { recursive: true, force: true });
  };
  /** The result text of a call, or undefined when it was refused (any error). */
  const call = async (name: string, args: Record<string, unknown>) => {
    try {
      return String(await client.callTool(`code.${name}`, args as never, { timeoutMs: 10_000 }));
    } catch (error) {
      if ((error as { code?: string }).code === 'TIMEOUT') throw error;
      return undefined;
    }
  };
  return { root, outside, call };
}

/** Runs `round` until ROUNDS rounds or BUDGET_MS have passed; returns the number of rounds run. */
async function rounds(round: (i: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  let i = 0;
  for (; i < ROUNDS && performance.now() - t0 < BUDGET_MS; i++) await round(i);
  return i;
}

describe.skipIf(process.platform === 'win32')('code tools under a directory-for-symlink swap', () => {
  describe.each([
    ['built-in', false as const],
    ['ripgrep', undefined],
  ])('grep (%s)', (label, ripgrep) => {
    it.skipIf(label === 'ripgrep' && !hasRipgrep)(
      'never returns lines of a file outside',
      { timeout: 60_000 },
      async () => {
        const { call } = await setup(ripgrep);
        let leaks = 0;
        let inside = 0;
        let missed = 0;
        const n = await rounds(async () => {
          const outs = await Promise.all([
            call('grep', { pattern: 'MARKER' }),
            call('grep', { pattern: 'MARKER', path: 'sub' }),
            call('grep', { pattern: 'MARKER', path: 'sub/file.txt' }),
            call('grep', { pattern: 'MARKER', glob: '*.txt' }),
          ]);
          for (const out of outs) {
            if (out?.includes('LEAK')) leaks++;
            if (out?.includes('INSIDE-MARKER')) inside++;
            else missed++;
          }
        });
        expect(n).toBeGreaterThan(10);
        expect(leaks).toBe(0);
        expect(inside).toBeGreaterThan(0);
        expect(missed).toBeGreaterThan(0); // some calls met the link: the race was exercised
      },
    );
  });

  it('ls and glob never list a directory outside', { timeout: 60_000 }, async () => {
    const { call } = await setup(false);
    let leaks = 0;
    let inside = 0;
    let missed = 0;
    const n = await rounds(async () => {
      const outs = await Promise.all([
        call('ls', { path: 'sub' }),
        call('ls', { path: 'sub' }),
        call('glob', { pattern: '**/*.txt' }),
        call('glob', { pattern: '*', path: 'sub' }),
      ]);
      for (const out of outs) {
        if (out?.includes('outside-only')) leaks++;
        if (out?.includes('file.txt')) inside++;
        else missed++;
      }
    });
    expect(n).toBeGreaterThan(10);
    expect(leaks).toBe(0);
    expect(inside).toBeGreaterThan(0);
    expect(missed).toBeGreaterThan(0);
  });

  it('write never creates a file or directory outside', { timeout: 60_000 }, async () => {
    const { call, outside } = await setup(false);
    let written = 0;
    const n = await rounds(async (i) => {
      const outs = await Promise.all([
        call('write', { path: `sub/new-${i}.txt`, content: 'n\n' }),
        call('write', { path: `sub/d-${i}/e/new.txt`, content: 'n\n' }),
      ]);
      written += outs.filter((o) => o !== undefined).length;
    });
    const created = (await readdir(outside)).filter((name) => name.startsWith('new-') || name.startsWith('d-'));
    expect(n).toBeGreaterThan(10);
    expect(created).toEqual([]);
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(2 * n); // some writes met the link: the race was exercised
  });

  it('apply_patch never deletes a file outside', { timeout: 60_000 }, async () => {
    const { call, root, outside } = await setup(false);
    // Each patch also changes a large file, so time passes between opening its victim and deleting it.
    const lines = 20_000;
    const big = `${Array.from({ length: lines }, (_, i) => `line ${i}`).join('\n')}\nneedle\n`;
    const victims = [0, 1, 2, 3];
    for (const k of victims) {
      await writeFile(join(root, 'sub', `victim-${k}.txt`), 'x\n');
      await writeFile(join(outside, `victim-${k}.txt`), 'x\n');
    }
    const patch = (k: number) =>
      `--- a/sub/victim-${k}.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n` +
      `--- a/big-${k}.txt\n+++ b/big-${k}.txt\n@@ -${lines + 1} +${lines + 1} @@\n-needle\n+needle2\n`;
    let deleted = 0;
    let leaks = 0;
    const n = await rounds(async () => {
      await Promise.all(
        victims.map(async (k) => {
          await writeFile(join(root, `big-${k}.txt`), big); // the root itself is never swapped
          if ((await call('apply_patch', { patch: patch(k) })) === undefined) return;
          deleted++;
          // Put the victim back (the write itself may meet the link: try again).
          const content = { path: `sub/victim-${k}.txt`, content: 'x\n' };
          for (let t = 0; t < 100 && (await call('write', content)) === undefined; t++);
        }),
      );
      for (const k of victims) {
        const gone = await access(join(outside, `victim-${k}.txt`)).then(
          () => false,
          () => true,
        );
        if (!gone) continue;
        leaks++;
        await writeFile(join(outside, `victim-${k}.txt`), 'x\n');
      }
    });
    expect(n).toBeGreaterThan(10);
    expect(leaks).toBe(0);
    expect(deleted).toBeGreaterThan(0);
    expect(deleted).toBeLessThan(4 * n); // some deletes met the link: the race was exercised
  });

  it.skipIf(process.getuid?.() !== 0)(
    'as uid 65534 too: nothing outside is read, listed, created or deleted',
    { timeout: 60_000 },
    async () => {
      assertNodeRunsAs(65534, 65534);
      const base = await mkdtemp(join(tmpdir(), 'utcp-tools-race-'));
      stop = () => rm(base, { recursive: true, force: true });
      const root = join(base, 'root');
      const outside = join(base, 'outside');
      await mkdir(join(root, 'sub'), { recursive: true });
      await mkdir(outside);
      await writeFile(join(root, 'sub', 'file.txt'), 'INSIDE-MARKER\n');
      await writeFile(join(root, 'sub', 'victim.txt'), 'x\n');
      await writeFile(join(outside, 'file.txt'), 'LEAK-MARKER\n');
      await writeFile(join(outside, 'outside-only.txt'), 'LEAK-MARKER\n');
      await writeFile(join(outside, 'victim.txt'), 'x\n');
      for (const p of [
        base,
        root,
        join(root, 'sub'),
        outside,
        ...['file.txt', 'victim.txt'].map((f) => join(root, 'sub', f)),
      ])
        await chown(p, 65534, 65534);
      for (const f of ['file.txt', 'outside-only.txt', 'victim.txt']) await chown(join(outside, f), 65534, 65534);
      const fixture = fileURLToPath(new URL('../fixtures/tools/race.mjs', import.meta.url));
      const child = spawn(process.execPath, [fixture, root, outside, String(ROUNDS), String(BUDGET_MS)], {
        stdio: ['ignore', 'pipe', 'pipe'],
        uid: 65534,
        gid: 65534,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const kill = setTimeout(() => child.kill('SIGKILL'), 50_000);
      const code = await new Promise<number | null>((r) => child.once('close', r));
      clearTimeout(kill);
      expect(code, stderr).toBe(0);
      const counts = JSON.parse(stdout) as Record<string, number>;
      expect(counts.rounds).toBeGreaterThan(10);
      expect(counts.leaks).toBe(0);
      expect(counts.inside).toBeGreaterThan(0);
      expect(counts.refused).toBeGreaterThan(0);
      expect(counts.deleted).toBeGreaterThan(0);
    },
  );
});
