/**
 * Search tools: grep (ripgrep when installed, a built-in walker otherwise), glob and ls. All three respect
 * `.gitignore` files (the root's and nested ones), skip `.git`, never follow symbolic links while walking,
 * and cap their output. See docs/design/code-tools.md.
 */
import { spawn } from 'node:child_process';
import type { Dirent } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { createInterface } from 'node:readline';
import type { DirectFunction } from '../index.js';
import { boolArg, intArg, optionalString, stringArg, type CodeToolsContext } from './context.js';
import { untrustedGlob, untrustedPattern } from './regex.js';
import { looksBinary } from './workspace.js';

type Ignore = { ignores(path: string): boolean; add(patterns: string): unknown };

interface RuleSet {
  /** Directory of the .gitignore, relative to the root ('' for the root), posix separators. */
  base: string;
  ig: Ignore;
}

const toPosix = (p: string) => p.split(sep).join('/');

async function loadRules(rootReal: string, relDir: string): Promise<RuleSet | undefined> {
  let text: string;
  try {
    text = await readFile(join(rootReal, relDir, '.gitignore'), 'utf8');
  } catch {
    return undefined;
  }
  const ignore = (await import('ignore')).default;
  const ig = ignore().add(text) as Ignore;
  return { base: relDir, ig };
}

function ignored(rules: RuleSet[], rel: string, isDir: boolean): boolean {
  for (const r of rules) {
    const local = r.base === '' ? rel : rel.startsWith(`${r.base}/`) ? rel.slice(r.base.length + 1) : undefined;
    if (local === undefined || local === '') continue;
    if (r.ig.ignores(isDir ? `${local}/` : local)) return true;
  }
  return false;
}

export interface WalkEntry {
  /** Relative to the workspace root, posix separators. */
  rel: string;
  dirent: Dirent;
}

/** The rule sets that apply inside `relDir`: the .gitignore of every directory from the root down to it. */
async function rulesFor(rootReal: string, relDir: string): Promise<RuleSet[]> {
  const parts = relDir === '' ? [] : relDir.split('/');
  const dirs = [''];
  for (let i = 1; i <= parts.length; i++) dirs.push(parts.slice(0, i).join('/'));
  return (await Promise.all(dirs.map((d) => loadRules(rootReal, d)))).filter((r): r is RuleSet => r !== undefined);
}

/** True when `relDir` itself (or one of its parents) is ignored. */
async function isIgnoredDir(rootReal: string, relDir: string): Promise<boolean> {
  if (relDir === '') return false;
  const parts = relDir.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    if (parts[i - 1] === '.git') return true;
    if (ignored(await rulesFor(rootReal, parts.slice(0, i - 1).join('/')), dir, true)) return true;
  }
  return false;
}

/**
 * Walks files under `relStart` depth-first in name order, skipping `.git`, ignored entries and the insides of
 * symbolic links. Stops when `visit` returns false.
 */
export async function walk(
  rootReal: string,
  relStart: string,
  visit: (e: WalkEntry) => boolean | Promise<boolean>,
  signal?: AbortSignal,
): Promise<void> {
  const rules = await rulesFor(rootReal, relStart);
  const go = async (relDir: string, sets: RuleSet[]): Promise<boolean> => {
    signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await readdir(join(rootReal, relDir), { withFileTypes: true });
    } catch {
      return true;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name === '.git') continue;
      const rel = relDir === '' ? e.name : `${relDir}/${e.name}`;
      if (ignored(sets, rel, e.isDirectory())) continue;
      if (!(await visit({ rel, dirent: e }))) return false;
      if (e.isDirectory()) {
        const own = await loadRules(rootReal, rel);
        if (!(await go(rel, own ? [...sets, own] : sets))) return false;
      }
    }
    return true;
  };
  await go(relStart, rules);
}

/** The model's glob, matched in linear time (docs/design/security.md#untrusted-regex). */
function picomatcher(pattern: string, tool: string, argument: string): Promise<(path: string) => boolean> {
  return untrustedGlob(tool, argument, pattern);
}

/** Resolves a directory (or file) argument; returns its root-relative posix path. */
async function resolveStart(ctx: CodeToolsContext, path: string | undefined) {
  const { real, shown, rootReal } = await ctx.workspace.resolve(path ?? '.');
  const info = await stat(real).catch(() => undefined);
  if (!info) throw new Error(`${shown} does not exist`);
  return { rel: toPosix(relative(rootReal, real)), shown, rootReal, isDir: info.isDirectory(), real };
}

const MAX_MATCH_LINE = 500;
/** The built-in grep yields to the event loop after this long of matching (docs/design/security.md#untrusted-regex). */
const SLICE_MS = 20;

function cutLine(line: string): string {
  return line.length > MAX_MATCH_LINE ? `${line.slice(0, MAX_MATCH_LINE)}… [cut]` : line;
}

/** Resolves which ripgrep to use: a path, or undefined for the built-in search. Probed once per tool set. */
export function ripgrepLocator(option: string | false | undefined): () => Promise<string | undefined> {
  let found: Promise<string | undefined> | undefined;
  return () => {
    if (option === false) return Promise.resolve(undefined);
    found ??= new Promise((resolve) => {
      const bin = option ?? 'rg';
      const child = spawn(bin, ['--version'], { stdio: ['ignore', 'ignore', 'ignore'] });
      child.once('error', () => resolve(undefined));
      child.once('exit', (code) => resolve(code === 0 ? bin : undefined));
    });
    return found;
  };
}

async function grepWithRipgrep(
  bin: string,
  cwd: string,
  pattern: string,
  rel: string,
  glob: string | undefined,
  ci: boolean,
  max: number,
  signal: AbortSignal,
): Promise<{ lines: string[]; more: boolean }> {
  // ripgrep's own --glob would override .gitignore, so the glob filters its output instead (as the built-in search does).
  const args = [
    '--line-number',
    '--no-heading',
    '--with-filename',
    '--null',
    '--color',
    'never',
    '--no-require-git',
    '--hidden',
    '--glob',
    '!.git',
    '--sort',
    'path',
    '--no-config',
  ];
  if (ci) args.push('--ignore-case');
  const match = glob ? await picomatcher(glob, 'grep', 'glob') : undefined;
  args.push('--regexp', pattern, '--', rel === '' ? '.' : rel);
  const child = spawn(bin, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    signal,
    env: { PATH: process.env.PATH ?? '' },
  });
  const lines: string[] = [];
  let more = false;
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const rl = createInterface({ input: child.stdout });
  for await (const line of rl) {
    const nul = line.indexOf('\0');
    if (nul < 0) continue;
    const path = line.startsWith('./') ? line.slice(2, nul) : line.slice(0, nul);
    const local = rel === '' || path === rel ? path : path.slice(rel.length + 1);
    if (match && !match(local) && !match(path)) continue;
    if (lines.length >= max) {
      more = true;
      child.kill('SIGKILL');
      break;
    }
    lines.push(`${path}:${cutLine(line.slice(nul + 1))}`);
  }
  rl.close();
  const code = await exited.catch((e: Error) => {
    throw new Error(`grep failed: ${e.message}`);
  });
  if (!more && code === 2) throw new Error(`grep failed: ${stderr.trim() || 'ripgrep exited with status 2'}`);
  return { lines, more };
}

async function grepBuiltin(
  ctx: CodeToolsContext,
  rootReal: string,
  start: { rel: string; isDir: boolean },
  pattern: string,
  glob: string | undefined,
  ci: boolean,
  max: number,
  signal: AbortSignal,
) {
  const re = await untrustedPattern('grep', 'pattern', pattern, ci);
  const match = glob ? await picomatcher(glob, 'grep', 'glob') : undefined;
  const lines: string[] = [];
  let more = false;
  let slice = performance.now();
  const searchFile = async (rel: string) => {
    const path = join(rootReal, rel);
    const info = await stat(path).catch(() => undefined);
    if (!info?.isFile() || info.size > ctx.limits.maxFileBytes) return true;
    const bytes = await readFile(path).catch(() => undefined);
    if (!bytes || looksBinary(bytes)) return true;
    const text = bytes.toString('utf8').split(/\r?\n/);
    for (let i = 0; i < text.length; i++) {
      // Matching is linear, yet a big file still takes a while: let timers and the abort signal in between.
      if ((i & 1023) === 1023 && performance.now() - slice > SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        signal.throwIfAborted();
        slice = performance.now();
      }
      if (!re.test(text[i])) continue;
      if (lines.length >= max) {
        more = true;
        return false;
      }
      lines.push(`${rel}:${i + 1}:${cutLine(text[i])}`);
    }
    return true;
  };
  if (!start.isDir) {
    await searchFile(start.rel);
    return { lines, more };
  }
  await walk(
    rootReal,
    start.rel,
    async ({ rel, dirent }) => {
      if (!dirent.isFile()) return true;
      if (match && !match(rel.slice(start.rel === '' ? 0 : start.rel.length + 1)) && !match(rel)) return true;
      return searchFile(rel);
    },
    signal,
  );
  return { lines, more };
}

export function grepTool(ctx: CodeToolsContext, ripgrep: () => Promise<string | undefined>): DirectFunction {
  return {
    name: 'grep',
    description:
      'Search file contents with a regular expression. Returns "path:line:text" lines, sorted by path, at most ' +
      `${ctx.limits.grepMatches} (or head_limit). Respects .gitignore. glob filters files ("*.ts", "src/**/*.js"). Uses ripgrep when installed, else a built-in search; both take RE2/Rust regex syntax (no lookaround, no backreferences).`,
    tags: ['read'],
    inputs: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression' },
        path: {
          type: 'string',
          description: 'Directory or file to search, relative to the workspace root. Default "."',
        },
        glob: { type: 'string', description: 'Only files matching this glob' },
        ignore_case: { type: 'boolean', description: 'Case-insensitive. Default false' },
        head_limit: {
          type: 'integer',
          minimum: 1,
          description: `Most matches to return. Default ${ctx.limits.grepMatches}`,
        },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const pattern = stringArg(args, 'pattern');
      if (pattern === '') throw new Error('pattern must not be empty');
      const glob = optionalString(args, 'glob');
      const ci = boolArg(args, 'ignore_case');
      const max = Math.min(intArg(args, 'head_limit', ctx.limits.grepMatches), ctx.limits.grepMatches * 10);
      const start = await resolveStart(ctx, optionalString(args, 'path'));
      if (start.isDir && (await isIgnoredDir(start.rootReal, start.rel)))
        throw new Error(`${start.shown} is ignored by .gitignore`);
      const bin = await ripgrep();
      const { lines, more } = bin
        ? await grepWithRipgrep(bin, start.rootReal, pattern, start.rel, glob, ci, max, signal)
        : await grepBuiltin(ctx, start.rootReal, start, pattern, glob, ci, max, signal);
      if (lines.length === 0)
        return `No matches for ${JSON.stringify(pattern)} in ${start.shown}${glob ? ` (files matching ${glob})` : ''}`;
      if (more) lines.push(`(capped at ${max} matches; narrow the pattern, path or glob, or raise head_limit)`);
      return lines.join('\n');
    },
  };
}

export function globTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'glob',
    description: `Find files by glob pattern ("**/*.ts", "src/*.js", "*.md" matches at any depth). Paths relative to the workspace root, sorted, at most ${ctx.limits.listEntries}. Respects .gitignore.`,
    tags: ['read'],
    inputs: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Glob pattern, matched against paths relative to path' },
        path: { type: 'string', description: 'Directory to search in, relative to the workspace root. Default "."' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const pattern = stringArg(args, 'pattern');
      const match = await picomatcher(pattern, 'glob', 'pattern');
      const start = await resolveStart(ctx, optionalString(args, 'path'));
      if (!start.isDir) throw new Error(`${start.shown} is a file, not a directory`);
      const out: string[] = [];
      let more = 0;
      await walk(
        start.rootReal,
        start.rel,
        ({ rel, dirent }) => {
          if (dirent.isDirectory()) return true;
          const local = start.rel === '' ? rel : rel.slice(start.rel.length + 1);
          if (!match(local)) return true;
          if (out.length < ctx.limits.listEntries) out.push(rel);
          else more++;
          return more < 10_000;
        },
        signal,
      );
      if (out.length === 0) return `No files match ${pattern} in ${start.shown}`;
      if (more) out.push(`(${more}${more >= 10_000 ? '+' : ''} more files not shown; narrow the pattern)`);
      return out.join('\n');
    },
  };
}

export function lsTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'ls',
    description: `List a workspace directory: entries sorted, directories end with "/", symbolic links with "@". Entries ignored by .gitignore are left out and counted. At most ${ctx.limits.listEntries} entries.`,
    tags: ['read'],
    inputs: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Directory relative to the workspace root. Default "."' } },
      additionalProperties: false,
    },
    async handler(args) {
      const start = await resolveStart(ctx, optionalString(args, 'path'));
      if (!start.isDir) throw new Error(`${start.shown} is a file; use read to see it`);
      const entries = await readdir(start.real, { withFileTypes: true });
      const rules = await rulesFor(start.rootReal, start.rel);
      const names: string[] = [];
      let hidden = 0;
      for (const e of entries) {
        if (e.name === '.git') {
          hidden++;
          continue;
        }
        const rel = start.rel === '' ? e.name : `${start.rel}/${e.name}`;
        if (ignored(rules, rel, e.isDirectory())) {
          hidden++;
          continue;
        }
        names.push(e.isDirectory() ? `${e.name}/` : e.isSymbolicLink() ? `${e.name}@` : e.name);
      }
      names.sort();
      const extra = hidden ? `(${hidden} ignored entr${hidden === 1 ? 'y' : 'ies'} not shown)` : '';
      if (names.length === 0) return `(${start.shown} is empty)${extra ? ` ${extra}` : ''}`;
      const shown = names.slice(0, ctx.limits.listEntries);
      if (names.length > shown.length) shown.push(`(${names.length - shown.length} more entries not shown)`);
      if (extra) shown.push(extra);
      return shown.join('\n');
    },
  };
}
