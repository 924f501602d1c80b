/**
 * Packs the built package (`dist/` must be current) and installs the tarball into a fresh directory, as a user's
 * `npm install utcp-kit` would, then measures what landed in node_modules. Used by the bench (install size and
 * package count per protocol) and by test/packaging/lean-install.test.ts (which installs offline, from the npm cache).
 * docs/design/packaging.md#measuring.
 */
import { execFile } from 'node:child_process';
import { lstatSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * What each protocol (or optional part) adds to a plain install: the command the DEPENDENCY_MISSING error names.
 * Ranges come from package.json's peerDependencies.
 */
export const OPTIONAL_PARTS = [
  { part: 'websocket transport', packages: ['ws'] },
  { part: 'graphql transport', packages: ['graphql'], note: 'subscriptions over WebSocket also need ws' },
  { part: 'grpc transport', packages: ['@grpc/grpc-js', 'protobufjs'] },
  { part: 'mcp transport', packages: ['@modelcontextprotocol/client'] },
  { part: 'MCP bridge (serve-mcp)', packages: ['@modelcontextprotocol/server'] },
  { part: 'coding toolset (utcp-kit/tools)', packages: ['diff', 'html-to-text', 'ignore', 'picomatch'] },
  { part: 'PostgreSQL catalog', packages: ['pg', 'pg-copy-streams'] },
  { part: 'embedded PostgreSQL catalog (PGlite)', packages: ['@electric-sql/pglite'] },
  {
    part: 'code mode (utcp-kit/code-mode)',
    packages: ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync'],
    note: 'TypeScript scripts also need typescript',
  },
  { part: 'OpenTelemetry traces', packages: ['@opentelemetry/api'] },
];

/**
 * Runs npm with a deadline; resolves with stdout. The child env drops npm's per-run variables (`npm_config_*` set
 * by an enclosing `npm run`, e.g. a --omit of its own) but keeps the cache location.
 */
export function npm(args, cwd, timeoutMs = 180_000) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) || /^npm_config_cache$/i.test(k)) env[k] = v;
  return new Promise((resolve, reject) => {
    execFile(
      process.platform === 'win32' ? 'npm.cmd' : 'npm',
      args,
      { cwd, env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`npm ${args.join(' ')} failed: ${error.message}\n${stderr}`.slice(0, 4000)));
        else resolve(stdout);
      },
    );
  });
}

/** `npm pack` of the repository (scripts skipped: the caller built dist) into `dest`; the tarball's path and file list. */
export async function packTarball(dest) {
  const out = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', dest], ROOT);
  const [info] = JSON.parse(out);
  return { tarball: join(dest, info.filename), files: info.files.map((f) => f.path), size: info.size };
}

/**
 * A fresh project in a new temp dir with the tarball (plus `extra` packages) installed for production.
 * `offline`: only from the npm cache (tests never reach the registry).
 */
export async function installTarball(tarball, { offline = false, extra = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'utcp-kit-install-'));
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'lean-user', version: '1.0.0', private: true })}\n`,
  );
  const args = ['install', '--omit=dev', '--no-audit', '--no-fund', '--ignore-scripts', '--no-package-lock'];
  args.push(offline ? '--offline' : '--prefer-offline', tarball, ...extra);
  const started = performance.now();
  await npm(args, dir);
  return { dir, ms: performance.now() - started };
}

/** Bytes of every file under `path` (apparent sizes, links not followed). */
function bytesUnder(path) {
  const st = lstatSync(path);
  if (!st.isDirectory()) return st.size;
  let total = 0;
  for (const name of readdirSync(path)) total += bytesUnder(join(path, name));
  return total;
}

/** Size and packages of a project's node_modules: every installed package, nested ones and utcp-kit included. */
export function measureInstall(dir) {
  const lock = JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8'));
  const names = Object.keys(lock.packages)
    .filter((k) => k.startsWith('node_modules/') && !lock.packages[k].link)
    .map((k) => k.slice(k.lastIndexOf('node_modules/') + 'node_modules/'.length));
  return { bytes: bytesUnder(join(dir, 'node_modules')), packages: names.length, names };
}

/** `name@range` for each package, with the range package.json declares for it as a peer. */
export function withPeerRanges(packages) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  return packages.map((p) => (pkg.peerDependencies?.[p] ? `${p}@${pkg.peerDependencies[p]}` : p));
}
