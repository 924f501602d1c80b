/**
 * Workspace tools for the coding agent: read, list, write (create only) and edit (one exact replacement),
 * every path confined to the workspace root.
 */
import { mkdir, readdir, readFile, realpath, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DirectFunction, JsonObject } from '../../src/index.js';
import { displayPath, resolveWorkspacePath } from './workspace-path.js';

export interface WorkspaceToolsOptions {
  /** Largest file read, written or edited, in bytes. @default 1 MiB */
  maxFileBytes?: number;
  /** Most characters `read` returns in one call (the rest is announced with the next offset). @default 50_000 */
  maxReadChars?: number;
  /** Lines `read` returns when no `limit` is given. @default 2000 */
  defaultReadLines?: number;
  /** Longest line `read` shows before cutting it. @default 2000 */
  maxLineChars?: number;
  /** Most entries `list` returns. @default 500 */
  maxListEntries?: number;
}

const DEFAULTS: Required<WorkspaceToolsOptions> = {
  maxFileBytes: 1024 * 1024,
  maxReadChars: 50_000,
  defaultReadLines: 2000,
  maxLineChars: 2000,
  maxListEntries: 500,
};

function stringArg(args: JsonObject, name: string): string {
  const value = args[name];
  if (typeof value !== 'string') throw new Error(`${name} must be a string`);
  return value;
}

function positiveIntArg(args: JsonObject, name: string, fallback: number): number {
  const value = args[name];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer`);
  return value;
}

function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Occurrences of `needle` in `haystack`, overlapping ones included (so `aa` in `aaa` counts twice). */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0;
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) count++;
  return count;
}

function lineNumberAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function lineCount(text: string): number {
  return text === '' ? 0 : splitLines(text).length;
}

class FileMissingError extends Error {}

/** Reads a UTF-8 text file, refusing directories, files over the cap, and binary content. */
async function readTextFile(real: string, shown: string, maxBytes: number, signal: AbortSignal): Promise<string> {
  let info;
  try {
    info = await stat(real);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new FileMissingError(`${shown} does not exist`);
    throw error;
  }
  if (info.isDirectory()) throw new Error(`${shown} is a directory; use list to see its entries`);
  if (!info.isFile()) throw new Error(`${shown} is not a regular file`);
  if (info.size > maxBytes) throw new Error(`${shown} is ${info.size} bytes, more than the ${maxBytes}-byte limit`);
  const bytes = await readFile(real, { signal });
  if (bytes.subarray(0, 8192).includes(0)) throw new Error(`${shown} looks like a binary file`);
  return bytes.toString('utf8');
}

/**
 * The workspace tools as in-process functions for `client.registerFunctions('workspace', ...)`.
 * Relative paths are taken from `root`; nothing outside it (after following symbolic links) can be read or written.
 */
export function createWorkspaceTools(root: string, options: WorkspaceToolsOptions = {}): DirectFunction[] {
  const limits = { ...DEFAULTS, ...options };
  let rootReal: Promise<string> | undefined;
  const resolvePath = async (path: unknown) => {
    rootReal ??= realpath(root);
    const base = await rootReal;
    const real = await resolveWorkspacePath(base, path);
    return { real, shown: displayPath(base, real) };
  };

  const read: DirectFunction = {
    name: 'read',
    description:
      'Read a text file of the workspace. Returns numbered lines ("   1\\t..."); use offset (1-based line) and limit to page through long files.',
    tags: ['read-only'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root' },
        offset: { type: 'integer', minimum: 1, description: 'First line to show (1-based). Default 1' },
        limit: { type: 'integer', minimum: 1, description: `Number of lines to show. Default ${limits.defaultReadLines}` },
      },
      required: ['path'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const { real, shown } = await resolvePath(args.path);
      const offset = positiveIntArg(args, 'offset', 1);
      const limit = positiveIntArg(args, 'limit', limits.defaultReadLines);
      const text = await readTextFile(real, shown, limits.maxFileBytes, signal);
      if (text === '') return `(${shown} is empty)`;
      const lines = splitLines(text);
      if (offset > lines.length) return `(${shown} has ${lines.length} lines; offset ${offset} is past the end)`;
      const end = Math.min(lines.length, offset - 1 + limit);
      const width = Math.max(4, String(end).length);
      const out: string[] = [];
      let chars = 0;
      let last = offset - 1;
      for (let n = offset; n <= end; n++) {
        let line = lines[n - 1];
        if (line.length > limits.maxLineChars) line = `${line.slice(0, limits.maxLineChars)}… [line cut at ${limits.maxLineChars} characters]`;
        const row = `${String(n).padStart(width)}\t${line}`;
        if (chars + row.length + 1 > limits.maxReadChars && out.length > 0) {
          out.push(`(output capped at ${limits.maxReadChars} characters: showing lines ${offset}-${last} of ${lines.length}; read on with offset=${last + 1})`);
          return out.join('\n');
        }
        out.push(row);
        chars += row.length + 1;
        last = n;
      }
      if (end < lines.length) out.push(`(showing lines ${offset}-${end} of ${lines.length}; read on with offset=${end + 1})`);
      return out.join('\n');
    },
  };

  const list: DirectFunction = {
    name: 'list',
    description: 'List the entries of a workspace directory (directories end with "/").',
    tags: ['read-only'],
    inputs: {
      type: 'object',
      properties: { path: { type: 'string', description: 'Directory relative to the workspace root. Default "."' } },
      additionalProperties: false,
    },
    async handler(args) {
      const { real, shown } = await resolvePath(args.path ?? '.');
      let entries;
      try {
        entries = await readdir(real, { withFileTypes: true });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw new Error(`${shown} does not exist`);
        if (code === 'ENOTDIR') throw new Error(`${shown} is a file; use read to see it`);
        throw error;
      }
      const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
      if (names.length === 0) return `(${shown} is empty)`;
      const shownNames = names.slice(0, limits.maxListEntries);
      if (names.length > shownNames.length) shownNames.push(`(${names.length - shownNames.length} more entries not shown)`);
      return shownNames.join('\n');
    },
  };

  const write: DirectFunction = {
    name: 'write',
    description: 'Create a new file in the workspace (parent directories are created). Refuses to overwrite: use edit to change an existing file.',
    tags: ['writes-files'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'New file path relative to the workspace root' },
        content: { type: 'string', description: 'The whole file content' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const { real, shown } = await resolvePath(args.path);
      const content = stringArg(args, 'content');
      const size = Buffer.byteLength(content);
      if (size > limits.maxFileBytes) throw new Error(`content is ${size} bytes, more than the ${limits.maxFileBytes}-byte limit`);
      await mkdir(dirname(real), { recursive: true });
      try {
        // 'wx' creates atomically and never follows or replaces an existing entry.
        await writeFile(real, content, { flag: 'wx', signal });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`${shown} already exists; write only creates new files, use edit to change it`);
        throw error;
      }
      return `Created ${shown} (${size} bytes, ${lineCount(content)} lines)`;
    },
  };

  const edit: DirectFunction = {
    name: 'edit',
    description:
      'Edit a workspace file by replacing old_string, which must occur exactly once, with new_string. Copy old_string exactly from read (without the line numbers), with enough context to be unique.',
    tags: ['writes-files'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root' },
        old_string: { type: 'string', description: 'Exact text to replace; must occur once in the file' },
        new_string: { type: 'string', description: 'Replacement text' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    async handler(args, { signal }) {
      const { real, shown } = await resolvePath(args.path);
      const oldString = stringArg(args, 'old_string');
      const newString = stringArg(args, 'new_string');
      if (oldString === '') throw new Error('old_string must not be empty; to create a file use write');
      if (oldString === newString) throw new Error('new_string is identical to old_string; nothing to change');
      let text: string;
      try {
        text = await readTextFile(real, shown, limits.maxFileBytes, signal);
      } catch (error) {
        if (error instanceof FileMissingError) throw new Error(`${shown} does not exist; use write to create it`);
        throw error;
      }
      const count = countOccurrences(text, oldString);
      if (count === 0) throw new Error(`old_string not found in ${shown}; read the file and copy the text exactly, including whitespace and indentation`);
      if (count > 1) throw new Error(`old_string is not unique in ${shown}: it occurs ${count} times; include more surrounding lines so it matches exactly once`);
      const at = text.indexOf(oldString);
      // Slicing, not String#replace: `$&` and friends in new_string must stay literal.
      const updated = text.slice(0, at) + newString + text.slice(at + oldString.length);
      const size = Buffer.byteLength(updated);
      if (size > limits.maxFileBytes) throw new Error(`the edit would make ${shown} ${size} bytes, more than the ${limits.maxFileBytes}-byte limit`);
      await writeFile(real, updated, { signal });
      const line = lineNumberAt(text, at);
      return `Edited ${shown} at line ${line}: replaced ${lineCount(oldString)} line(s) with ${lineCount(newString)}`;
    },
  };

  return [read, list, write, edit];
}
