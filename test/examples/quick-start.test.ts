/** The README's Quick start must run as pasted: it is extracted from README.md and run against the built package. */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';

const ROOT = resolve(__dirname, '../..');

it('the README Quick start runs as pasted and prints what the README says', async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Quick start'));
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  expect(code, 'a ts block under "## Quick start"').toBeTruthy();
  const dir = mkdtempSync(join(tmpdir(), 'utcp-quick-start-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  // As in a project that ran `npm install utcp-kit`: the package resolves by name to this repository's build.
  mkdirSync(join(dir, 'node_modules'));
  symlinkSync(ROOT, join(dir, 'node_modules', 'utcp-kit'), 'dir');
  writeFileSync(join(dir, 'quick-start.mjs'), code!);
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    execFile(
      process.execPath,
      ['quick-start.mjs'],
      { cwd: dir, timeout: 60_000, env: { PATH: process.env.PATH!, HOME: dir } },
      (error, stdout, stderr) => done({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toBe('demo.greet → Hello, Ada!\nlocal.add → 5\n');
  expect(section).toContain('It prints `demo.greet → Hello, Ada!` and `local.add → 5`');
}, 90_000); // above the child's 60 s deadline
