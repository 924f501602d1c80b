/**
 * Search tools: grep (ripgrep when installed, a built-in search otherwise), glob and ls. All three respect
 * `.gitignore` files (the root's and nested ones), skip `.git`, never follow symbolic links while walking,
 * and cap their output. The walk goes through directory descriptors and opens every file (ignore files included)
 * without following a link or blocking, so what is searched is what was checked; ripgrep receives those open
 * files, never a path to resolve (docs/design/code-tools.md#descriptor-walk).
 */
import { spawn } from 'node:child_process';
import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { DirectFunction } from '../index.js';
import { boolArg, intArg, optionalString, stringArg, type CodeToolsContext } from './context.js';
import { QUOTED_NAMES_NOTE, quotePath } from './text.js';
import { openDirAt, openRegularAt, readHead, type Dir, type RegularFile } from './dir.js';
import { untrustedGlob, untrustedPattern } from './regex.js';
import { looksBinary, type OpenedPath } from './workspace.js';

type Ignore = { ignores(path: string): boolean; add(patterns: string): unknown };

interface RuleSet {
  /** Directory of the .gitignore, relative to the root ('' for the root), posix separators. */
  base: string;
  ig: Ignore;
}

/** Bytes of one ignore file that are used; the rest is left out (docs/design/code-tools.md#ignore-files). */
export const MAX_IGNORE_BYTES = 1024 * 1024;
/** Directory levels the walk descends below its start (each level holds one descriptor open). */
const MAX_DEPTH = 256;
/** Files handed to one ripgrep process, as inherited descriptors. */
const RIPGREP_BATCH = 200;

/** Reads a directory's `.gitignore`: a regular file opened through the directory, at most MAX_IGNORE_BYTES. */
async function loadRules(dir: Dir, relDir: string): Promise<RuleSet | undefined> {
  let file: RegularFile;
  try {
    file = await openRegularAt(dir, '.gitignore');
  } catch {
    return undefined; // missing, a link, a FIFO, a device: no rules
  }
  let bytes: Buffer;
  try {
    bytes = await readHead(file.handle, Math.min(file.stats.size, MAX_IGNORE_BYTES));
  } finally {
    await file.handle.close();
  }
  if (file.stats.size > MAX_IGNORE_BYTES) bytes = bytes.subarray(0, bytes.lastIndexOf(10) + 1);
  const ignore = (await import('ignore')).default;
  const ig = ignore().add(bytes.toString('utf8')) as Ignore;
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

export interface WalkEntry<T = undefined> {
  /** Relative to the workspace root, posix separators (not quoted). */
  rel: string;
  dirent: Dirent;
  /** The open directory holding the entry (open only while `visit` runs). */
  dir: Dir;
  /** What `prefetch` made of a non-directory entry; `visit` then owns it. */
  prefetched?: T;
}

export interface WalkOptions<T> {
  signal?: AbortSignal;
  /**
   * Started for non-directory entries up to PREFETCH entries ahead of `visit`, so that opens and reads run in
   * parallel while results keep walk order. Its directory stays open until it settles.
   */
  prefetch?: (dir: Dir, dirent: Dirent, rel: string) => Promise<T | undefined> | undefined;
  /** Disposes of a prefetched value that `visit` never received (the walk stopped first). */
  discard?: (value: T) => Promise<void>;
}

/** Non-directory entries prepared ahead of the one being visited. */
const PREFETCH = 16;

interface Start {
  opened: OpenedPath;
  /** The ignore rules of every directory from the root down to the start (its own included). */
  rules: RuleSet[];
  /** The start directory, or one above it, is ignored or is `.git`. */
  ignoredDir: boolean;
}

/** Opens a directory (or file) argument through the descriptor walk, collecting the ignore rules on the way. */
async function openStart(ctx: CodeToolsContext, path: string | undefined): Promise<Start> {
  const rules: RuleSet[] = [];
  let ignoredDir = false;
  const opened = await ctx.workspace.openPath(path ?? '.', async (dir, relDir) => {
    if (relDir !== '' && (relDir.split('/').pop() === '.git' || ignored(rules, relDir, true))) ignoredDir = true;
    const own = await loadRules(dir, relDir);
    if (own) rules.push(own);
  });
  return { opened, rules, ignoredDir };
}

function closeStart(start: Start): Promise<void> {
  return start.opened.kind === 'dir' ? start.opened.dir.close() : start.opened.file.handle.close();
}

/**
 * Walks entries under the start directory depth-first in name order, skipping `.git` and ignored entries. Each
 * subdirectory is opened through its parent's descriptor without following a link, so a directory swapped for a
 * link is skipped, never entered. Stops when `visit` returns false.
 */
export async function walk<T = undefined>(
  start: Dir,
  relStart: string,
  rules: RuleSet[],
  visit: (e: WalkEntry<T>) => boolean | Promise<boolean>,
  options: WalkOptions<T> = {},
): Promise<void> {
  const { signal, prefetch, discard } = options;
  const go = async (dir: Dir, relDir: string, inherited: RuleSet[], depth: number): Promise<boolean> => {
    signal?.throwIfAborted();
    let entries: Dirent[];
    try {
      entries = await readdir(dir.path, { withFileTypes: true });
    } catch {
      return true;
    }
    // The start directory's own rules came with `rules`; below it, a directory's .gitignore is read when listed.
    const own = depth > 0 && entries.some((e) => e.name === '.gitignore') ? await loadRules(dir, relDir) : undefined;
    const sets = own ? [...inherited, own] : inherited;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const kept: { e: Dirent; rel: string }[] = [];
    for (const e of entries) {
      if (e.name === '.git') continue;
      const rel = relDir === '' ? e.name : `${relDir}/${e.name}`;
      if (!ignored(sets, rel, e.isDirectory())) kept.push({ e, rel });
    }
    const ahead: (Promise<T | undefined> | undefined)[] = [];
    let started = 0;
    try {
      for (let k = 0; k < kept.length; k++) {
        for (; prefetch && started < kept.length && started < k + PREFETCH; started++) {
          const { e, rel } = kept[started];
          if (!e.isDirectory()) ahead[started] = prefetch(dir, e, rel)?.catch(() => undefined);
        }
        const { e, rel } = kept[k];
        const prefetched = await ahead[k];
        ahead[k] = undefined;
        if (!(await visit({ rel, dirent: e, dir, prefetched }))) return false;
        if (e.isDirectory() && depth < MAX_DEPTH) {
          const sub = await openDirAt(dir, e.name).catch(() => undefined); // replaced meanwhile: skipped
          if (!sub) continue;
          try {
            if (!(await go(sub, rel, sets, depth + 1))) return false;
          } finally {
            await sub.close();
          }
        }
      }
      return true;
    } finally {
      for (const pending of ahead) {
        const value = await pending;
        if (value !== undefined) await discard?.(value);
      }
    }
  };
  await go(start, relStart, rules, 0);
}

/** The model's glob, matched in linear time (docs/design/security.md#untrusted-regex). */
function picomatcher(pattern: string, tool: string, argument: string): Promise<(path: string) => boolean> {
  return untrustedGlob(tool, argument, pattern);
}

const MAX_MATCH_LINE = 500;

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

/** A file to search: opened (a regular file) through its directory, with its root-relative path. */
interface Candidate {
  rel: string;
  file: RegularFile;
  /** Where descriptors cannot be named (no `/proc`): the path the file was opened by; else undefined. */
  path: string | undefined;
  /** True for the start file (closed by its owner). */
  start?: boolean;
  /** With `readUpTo`: the content (its handle already closed), or null when larger than that. */
  bytes?: Buffer | null;
}

/**
 * The files a grep searches, in walk order, each opened through the descriptor walk (several ahead of the one
 * handed over, so opens run in parallel). `take` owns each candidate it receives and must close it.
 */
async function eachCandidate(
  start: Start,
  glob: string | undefined,
  signal: AbortSignal,
  take: (c: Candidate) => Promise<boolean>,
  readUpTo?: number,
): Promise<void> {
  const { opened } = start;
  if (opened.kind === 'file') {
    const { handle, stats, real } = opened.file;
    await take({ rel: opened.rel, file: { handle, stats }, path: opened.byDescriptor ? undefined : real, start: true });
    return;
  }
  const match = glob ? await picomatcher(glob, 'grep', 'glob') : undefined;
  const prefix = opened.rel === '' ? 0 : opened.rel.length + 1;
  await walk<Candidate>(
    opened.dir,
    opened.rel,
    start.rules,
    // A missing prefetched value: not a file, filtered out, or replaced meanwhile by a link or a non-regular file.
    ({ prefetched }) => (prefetched ? take(prefetched) : true),
    {
      signal,
      prefetch(dir, dirent, rel) {
        if (!dirent.isFile()) return undefined; // FIFOs, sockets, devices and links are never opened
        if (match && !match(rel.slice(prefix)) && !match(rel)) return undefined;
        return openRegularAt(dir, dirent.name).then(async (file): Promise<Candidate> => {
          const path = dir.byDescriptor ? undefined : dir.at(dirent.name);
          if (readUpTo === undefined) return { rel, file, path };
          try {
            const bytes = file.stats.size <= readUpTo ? await readHead(file.handle, file.stats.size) : null;
            return { rel, file, path, bytes };
          } finally {
            await file.handle.close();
          }
        });
      },
      discard: async (c) => {
        if (c.bytes === undefined) await c.file.handle.close();
      },
    },
  );
}

/** Runs ripgrep over open files passed as inherited descriptors; returns `line:text` rows per file. */
async function ripgrepBatch(
  bin: string,
  cwd: string,
  files: Candidate[],
  pattern: string,
  ci: boolean,
  maxPerFile: number,
  signal: AbortSignal,
): Promise<string[][]> {
  // Each open file becomes the child's descriptor 3 + i, which ripgrep opens as /proc/self/fd/<3 + i>: the very
  // file that was checked, never a path resolved again.
  const names = files.map((f, i) => f.path ?? `/proc/self/fd/${3 + i}`);
  const args = [
    '--line-number',
    '--no-heading',
    '--with-filename',
    '--null',
    '--color',
    'never',
    '--no-config',
    '--no-ignore', // ignore files were applied by the walk; ripgrep reads none itself
    '--max-columns',
    String(MAX_MATCH_LINE),
    '--max-columns-preview',
    '--max-count',
    String(maxPerFile),
  ];
  if (ci) args.push('--ignore-case');
  args.push('--regexp', pattern, '--', ...names);
  const child = spawn(bin, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe', ...files.map((f) => f.file.handle.fd)],
    signal,
    env: { PATH: process.env.PATH ?? '' },
  });
  const index = new Map(names.map((n, i) => [n, i]));
  const rows: string[][] = files.map(() => []);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  const rl = createInterface({ input: child.stdout! });
  for await (const line of rl) {
    const nul = line.indexOf('\0');
    const i = nul < 0 ? undefined : index.get(line.slice(0, nul));
    if (i !== undefined && rows[i].length < maxPerFile) rows[i].push(line.slice(nul + 1));
  }
  const code = await exited.catch((e: Error) => {
    throw new Error(`grep failed: ${e.message}`);
  });
  if (code === 2) throw new Error(`grep failed: ${stderr.trim() || 'ripgrep exited with status 2'}`);
  return rows;
}

async function grepWithRipgrep(
  bin: string,
  start: Start,
  pattern: string,
  glob: string | undefined,
  ci: boolean,
  max: number,
  signal: AbortSignal,
): Promise<{ lines: string[]; more: boolean }> {
  const lines: string[] = [];
  let more = false;
  let batch: Candidate[] = [];
  const close = () => Promise.all(batch.map((c) => (c.start ? undefined : c.file.handle.close())));
  const flush = async (): Promise<boolean> => {
    if (batch.length === 0 || more) return !more;
    try {
      const rows = await ripgrepBatch(bin, start.opened.rootReal, batch, pattern, ci, max - lines.length + 1, signal);
      for (const [i, found] of rows.entries()) {
        for (const row of found) {
          if (lines.length >= max) {
            more = true;
            return false;
          }
          lines.push(`${quotePath(batch[i].rel)}:${row}`);
        }
      }
      return true;
    } finally {
      await close();
      batch = [];
    }
  };
  try {
    await eachCandidate(start, glob, signal, async (c) => {
      batch.push(c);
      return batch.length < RIPGREP_BATCH || (await flush());
    });
    await flush();
  } finally {
    await close();
  }
  return { lines, more };
}

/** The built-in grep yields to the event loop after this long of matching (docs/design/security.md#untrusted-regex). */
const SLICE_MS = 20;

async function grepBuiltin(
  ctx: CodeToolsContext,
  start: Start,
  pattern: string,
  glob: string | undefined,
  ci: boolean,
  max: number,
  signal: AbortSignal,
) {
  // The model's pattern on the linear-time engine (docs/design/security.md#untrusted-regex).
  const re = await untrustedPattern('grep', 'pattern', pattern, ci);
  const lines: string[] = [];
  let more = false;
  let slice = performance.now();
  const maxBytes = ctx.limits.maxFileBytes;
  const take = async ({ rel, file, bytes }: Candidate) => {
    // The start file comes open (its owner closes it); walked files come read and closed.
    if (bytes === undefined && file.stats.size <= maxBytes) bytes = await readHead(file.handle, file.stats.size);
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
      lines.push(`${quotePath(rel)}:${i + 1}:${cutLine(text[i])}`);
    }
    return true;
  };
  await eachCandidate(start, glob, signal, take, maxBytes);
  return { lines, more };
}

export function grepTool(ctx: CodeToolsContext, ripgrep: () => Promise<string | undefined>): DirectFunction {
  return {
    name: 'grep',
    description:
      'Search file contents with a regular expression. Returns "path:line:text" lines, sorted by path, at most ' +
      `${ctx.limits.grepMatches} (or head_limit). Respects .gitignore. glob filters files ("*.ts", "src/**/*.js"). Uses ripgrep when installed, else a built-in search; both take RE2/Rust regex syntax (no lookaround, no backreferences). ${QUOTED_NAMES_NOTE}`,
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
      const bin = await ripgrep();
      if (!bin) await untrustedPattern('grep', 'pattern', pattern, ci); // a bad pattern is reported before any file is opened
      const start = await openStart(ctx, optionalString(args, 'path'));
      const shown = start.opened.shown;
      let found: { lines: string[]; more: boolean };
      try {
        if (start.opened.kind === 'dir' && start.ignoredDir) throw new Error(`${shown} is ignored by .gitignore`);
        found = bin
          ? await grepWithRipgrep(bin, start, pattern, glob, ci, max, signal)
          : await grepBuiltin(ctx, start, pattern, glob, ci, max, signal);
      } finally {
        await closeStart(start);
      }
      const { lines, more } = found;
      if (lines.length === 0)
        return `No matches for ${JSON.stringify(pattern)} in ${shown}${glob ? ` (files matching ${glob})` : ''}`;
      if (more) lines.push(`(capped at ${max} matches; narrow the pattern, path or glob, or raise head_limit)`);
      return lines.join('\n');
    },
  };
}

export function globTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'glob',
    description: `Find files by glob pattern ("**/*.ts", "src/*.js", "*.md" matches at any depth). Paths relative to the workspace root, sorted, at most ${ctx.limits.listEntries}. Respects .gitignore. ${QUOTED_NAMES_NOTE}`,
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
      const start = await openStart(ctx, optionalString(args, 'path'));
      const { opened } = start;
      const out: string[] = [];
      let more = 0;
      try {
        if (opened.kind !== 'dir') throw new Error(`${opened.shown} is a file, not a directory`);
        await walk(
          opened.dir,
          opened.rel,
          start.rules,
          ({ rel, dirent }) => {
            if (dirent.isDirectory()) return true;
            const local = opened.rel === '' ? rel : rel.slice(opened.rel.length + 1);
            if (!match(local)) return true;
            if (out.length < ctx.limits.listEntries) out.push(quotePath(rel));
            else more++;
            return more < 10_000;
          },
          { signal },
        );
      } finally {
        await closeStart(start);
      }
      if (out.length === 0) return `No files match ${pattern} in ${opened.shown}`;
      if (more) out.push(`(${more}${more >= 10_000 ? '+' : ''} more files not shown; narrow the pattern)`);
      return out.join('\n');
    },
  };
}

export function lsTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'ls',
    description: `List a workspace directory: entries sorted, directories end with "/", symbolic links with "@". Entries ignored by .gitignore are left out and counted. At most ${ctx.limits.listEntries} entries. ${QUOTED_NAMES_NOTE}`,
    tags: ['read'],
    inputs: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Directory relative to the workspace root. Default "."' } },
      additionalProperties: false,
    },
    async handler(args) {
      const start = await openStart(ctx, optionalString(args, 'path'));
      const { opened } = start;
      const names: string[] = [];
      let hidden = 0;
      try {
        if (opened.kind !== 'dir') throw new Error(`${opened.shown} is a file; use read to see it`);
        const entries = await readdir(opened.dir.path, { withFileTypes: true });
        for (const e of entries) {
          if (e.name === '.git') {
            hidden++;
            continue;
          }
          const rel = opened.rel === '' ? e.name : `${opened.rel}/${e.name}`;
          if (ignored(start.rules, rel, e.isDirectory())) {
            hidden++;
            continue;
          }
          const name = quotePath(e.name);
          names.push(e.isDirectory() ? `${name}/` : e.isSymbolicLink() ? `${name}@` : name);
        }
      } finally {
        await closeStart(start);
      }
      names.sort();
      const extra = hidden ? `(${hidden} ignored entr${hidden === 1 ? 'y' : 'ies'} not shown)` : '';
      if (names.length === 0) return `(${opened.shown} is empty)${extra ? ` ${extra}` : ''}`;
      const shown = names.slice(0, ctx.limits.listEntries);
      if (names.length > shown.length) shown.push(`(${names.length - shown.length} more entries not shown)`);
      if (extra) shown.push(extra);
      return shown.join('\n');
    },
  };
}
