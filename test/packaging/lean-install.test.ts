/**
 * The published package installs lean (docs/design/packaging.md): `npm pack`, then a production install of the
 * tarball into a fresh project, offline from the npm cache (`npm ci` filled it), as a user's `npm install utcp-kit`.
 * Protocol libraries are optional peers, so they are absent there, and using one of those protocols must fail at
 * registration with DEPENDENCY_MISSING naming the install command. Figures (size, package count per protocol) are
 * the bench's (bench/install.ts); this file checks the shape.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installTarball, measureInstall, npm, OPTIONAL_PARTS, packTarball } from '../../scripts/lean-install.mjs';

const FIXTURE = join(__dirname, '../fixtures/lean-install/check.mjs');
const REPO = join(__dirname, '../..');
const PROTOCOL_LIBRARIES = OPTIONAL_PARTS.flatMap((p) => p.packages);

function run(
  file: string,
  args: string[],
  cwd: string,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: timeoutMs, killSignal: 'SIGKILL' }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

describe.skipIf(process.platform === 'win32')('a plain install of the packed tarball', { timeout: 120_000 }, () => {
  let packDir: string;
  let files: string[];
  let project: string;

  beforeAll(async () => {
    packDir = mkdtempSync(join(tmpdir(), 'utcp-pack-'));
    const packed = await packTarball(packDir);
    files = packed.files;
    ({ dir: project } = await installTarball(packed.tarball, { offline: true }));
  }, 200_000);

  afterAll(() => {
    if (packDir) rmSync(packDir, { recursive: true, force: true });
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('ships dist, README, LICENSE and docs/cli-windows.md: no src/ and no source maps', () => {
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('README.md');
    expect(files).toContain('docs/cli-windows.md');
    expect(files.filter((f) => f.startsWith('src/') || f.endsWith('.map'))).toEqual([]);
  });

  it('installs no protocol library and stays within 30 packages and 15 MB', () => {
    const { names, packages, bytes } = measureInstall(project);
    expect(names.filter((n) => PROTOCOL_LIBRARIES.includes(n) || n === '@sinclair/typebox')).toEqual([]);
    expect(packages).toBeLessThanOrEqual(30);
    expect(bytes).toBeLessThanOrEqual(15e6);
  });

  it('calls an http tool, and fails registration of the other protocols with the npm install command', async () => {
    copyFileSync(FIXTURE, join(project, 'check.mjs'));
    const { code, stdout, stderr } = await run(process.execPath, ['check.mjs'], project);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const out = JSON.parse(stdout);
    expect(out.http).toEqual({ success: true, errors: [], result: { echoed: '/echo' } });
    const missing = (command: string) => ({
      success: false,
      errorCode: 'DEPENDENCY_MISSING',
      errors: [expect.stringMatching(new RegExp(`: ${command.replace(/[/@]/g, '\\$&')}$`))],
    });
    expect(out.websocket).toEqual(missing('npm install ws'));
    expect(out.graphql).toEqual(missing('npm install graphql'));
    expect(out.grpc).toEqual(missing('npm install @grpc/grpc-js protobufjs'));
    expect(out.mcp).toEqual(missing('npm install @modelcontextprotocol/client'));
    expect(out.tools).toEqual({
      code: 'DEPENDENCY_MISSING',
      message:
        'registerCodeTools: the tools edit, grep need diff, ignore, picomatch: npm install diff ignore picomatch',
    });
  });

  it('type-checks a consumer against the declarations with skipLibCheck off and no optional peer', async () => {
    copyFileSync(join(__dirname, '../fixtures/lean-install/consumer.mts'), join(project, 'consumer.mts'));
    const compilerOptions = {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      typeRoots: [join(REPO, 'node_modules/@types')],
      types: ['node'],
    };
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.mts'] }));
    const tsc = join(REPO, 'node_modules/typescript/bin/tsc');
    const { code, stdout, stderr } = await run(process.execPath, [tsc, '-p', '.'], project, 100_000);
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('runs the utcp CLI, which names the command for what it lacks', async () => {
    const bin = join(project, 'node_modules/.bin/utcp');
    const help = await run(bin, ['--help'], project);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: utcp <command>');
    writeFileSync(join(project, 'utcp.json'), '{}\n');
    const serve = await run(bin, ['serve-mcp'], project);
    expect(serve.code).not.toBe(0);
    expect(serve.stderr).toMatch(/DEPENDENCY_MISSING.*: npm install @modelcontextprotocol\/\S+/);
  });

  // Last: it adds packages to the shared project.
  it('finds an optional peer the user installs next to it', async () => {
    await npm(
      ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock', 'ws'],
      project,
      100_000,
    );
    copyFileSync(FIXTURE, join(project, 'check.mjs'));
    const { code, stdout } = await run(process.execPath, ['check.mjs'], project);
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    // Past the dependency check: the local server answers the WebSocket upgrade with a plain 200.
    expect(out.websocket).toMatchObject({ success: false, errorCode: 'HTTP_STATUS' });
    expect(out.graphql).toMatchObject({ errorCode: 'DEPENDENCY_MISSING' });
  });
});
