/**
 * Without the optional engine packages, code mode fails with a typed error naming the install command
 * (docs/design/code-mode.md#engine). Runs the built package copied where no node_modules can be found.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it, onTestFinished } from 'vitest';

const DIST = resolve(__dirname, '../../dist');

it('a missing engine is a DEPENDENCY_MISSING CodeModeError naming npm install', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'code-mode-no-engine-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await cp(DIST, join(dir, 'dist'), { recursive: true });
  await writeFile(join(dir, 'package.json'), '{"type":"module"}');
  await writeFile(
    join(dir, 'main.mjs'),
    `import { runCode } from './dist/code-mode/index.js';
const client = { getTools: async () => [], callTool: async () => null };
try { await runCode(client, 'return 1'); console.log('ran'); }
catch (e) { console.log(JSON.stringify({ name: e.name, code: e.code, message: e.message })); }`,
  );
  const { stdout } = await promisify(execFile)(process.execPath, ['main.mjs'], { cwd: dir, timeout: 30_000 });
  const out = JSON.parse(stdout);
  expect(out).toMatchObject({ name: 'CodeModeError', code: 'DEPENDENCY_MISSING' });
  expect(out.message).toContain('npm install quickjs-emscripten-core @jitl/quickjs-wasmfile-release-sync');
}, 40_000);
