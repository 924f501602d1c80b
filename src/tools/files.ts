/** File tools: read, write (create only), write_append, edit (exactly one occurrence). See docs/design/code-tools.md. */
import type { DirectFunction, JsonObject } from '../index.js';
import { boolArg, intArg, stringArg, type CodeToolsContext } from './context.js';
import { unifiedDiff } from './diff.js';
import { StringDecoder } from 'node:string_decoder';
import {
  explainMiss,
  finishHash,
  HASH_START,
  hasReadPrefix,
  lineCount,
  lineHash,
  lineNumberAt,
  lineStartIndex,
  occurrences,
  splitLines,
  updateHash,
} from './text.js';
import { looksBinary, readAll, rewrite, type OpenedFile } from './workspace.js';

const DRY_RUN = { type: 'boolean', description: 'Only show the diff; change nothing' } as const;

async function readText(ctx: CodeToolsContext, path: unknown, mode: 'r' | 'r+') {
  const file = await ctx.workspace.openExisting(path, mode);
  try {
    const bytes = await readAll(file, ctx.limits.maxFileBytes);
    if (looksBinary(bytes)) throw new Error(`${file.shown} looks like a binary file; read only shows text`);
    return { file, text: bytes.toString('utf8') };
  } catch (error) {
    await file.handle.close();
    throw error;
  }
}

interface ReadRow {
  n: number;
  text: string;
  cut: boolean;
  hash: string;
}

/**
 * Lines `offset..end` of a file too large to load, scanned in chunks: lines before `offset` are only counted,
 * lines in range keep their first `lineChars` characters and a hash of the whole line. Returns the rows and
 * whether the file goes on after them.
 */
async function scanLines(
  file: OpenedFile,
  offset: number,
  end: number,
  lineChars: number,
): Promise<{ rows: ReadRow[]; more: boolean; lines: number }> {
  const decoder = new StringDecoder('utf8');
  const chunk = Buffer.alloc(64 * 1024);
  const rows: ReadRow[] = [];
  let n = 1; // the line being read
  let text = ''; // its first lineChars (+1, for a final \r) characters
  let length = 0; // its length so far
  let hash = HASH_START;
  let position = 0;
  const take = (piece: string) => {
    length += piece.length;
    if (n < offset) return;
    hash = updateHash(hash, piece);
    if (text.length <= lineChars) text += piece.slice(0, lineChars + 1 - text.length);
  };
  const finishLine = () => {
    if (n >= offset) {
      // A CRLF line ends with \r, which is not part of its text (as splitLines sees it).
      const crlf = text.endsWith('\r') && length === text.length;
      const full = crlf ? text.slice(0, -1) : text;
      rows.push({
        n,
        text: full.slice(0, lineChars),
        cut: (crlf ? length - 1 : length) > lineChars,
        hash: crlf ? lineHash(full) : finishHash(hash),
      });
    }
    n++;
    text = '';
    length = 0;
    hash = HASH_START;
  };
  for (;;) {
    const { bytesRead } = await file.handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) break;
    position += bytesRead;
    let s = decoder.write(chunk.subarray(0, bytesRead));
    for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n')) {
      take(s.slice(0, nl));
      finishLine();
      s = s.slice(nl + 1);
      if (n > end) return { rows, more: true, lines: n - 1 };
    }
    take(s);
  }
  take(decoder.end());
  if (length > 0) finishLine();
  return { rows, more: false, lines: n - 1 };
}

export function readTool(ctx: CodeToolsContext): DirectFunction {
  const { limits } = ctx;
  return {
    name: 'read',
    description:
      `Read a text file of the workspace. Each line is shown as "<line>:<hash><TAB><text>"; the "line:hash" pair is an anchor for edit. ` +
      `Use offset (1-based line) and limit to page; at most ${limits.readLines} lines or ${limits.readBytes} bytes per call, and the next offset is announced.`,
    tags: ['read'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root' },
        offset: { type: 'integer', minimum: 1, description: 'First line to show (1-based). Default 1' },
        limit: { type: 'integer', minimum: 1, description: `Number of lines to show. Default ${limits.readLines}` },
      },
      required: ['path'],
      additionalProperties: false,
    },
    async handler(args) {
      const offset = intArg(args, 'offset', 1);
      const limit = intArg(args, 'limit', limits.readLines);
      const file = await ctx.workspace.openExisting(args.path, 'r');
      const { shown } = file;
      let rows: ReadRow[];
      let total: number | undefined;
      let more: boolean;
      try {
        const head = Buffer.alloc(Math.min(8192, file.stats.size));
        await file.handle.read(head, 0, head.length, 0);
        if (looksBinary(head, file.stats.size > head.length))
          throw new Error(`${shown} looks like a binary file; read only shows text`);
        if (file.stats.size === 0) return `(${shown} is empty)`;
        const end = offset - 1 + limit;
        if (file.stats.size <= limits.maxFileBytes) {
          const lines = splitLines((await readAll(file, limits.maxFileBytes)).toString('utf8'));
          total = lines.length;
          rows = lines.slice(offset - 1, end).map((full, i) => ({
            n: offset + i,
            text: full.slice(0, limits.lineChars),
            cut: full.length > limits.lineChars,
            hash: lineHash(full),
          }));
          more = end < lines.length;
        } else {
          // Too large to load: scan to the lines asked for.
          const scanned = await scanLines(file, offset, end, limits.lineChars);
          rows = scanned.rows;
          more = scanned.more;
          total = scanned.more ? undefined : scanned.lines;
        }
      } finally {
        await file.handle.close();
      }
      if (rows.length === 0) return `(${shown} has ${total ?? 'fewer'} lines; offset ${offset} is past the end)`;
      const of = total === undefined ? ` of a ${file.stats.size}-byte file` : ` of ${total}`;
      const width = Math.max(4, String(rows[rows.length - 1].n).length);
      const out: string[] = [];
      let bytes = 0;
      for (const row of rows) {
        const line = row.cut ? `${row.text}… [line cut at ${limits.lineChars} characters]` : row.text;
        const text = `${String(row.n).padStart(width)}:${row.hash}\t${line}`;
        const size = Buffer.byteLength(text) + 1;
        if (bytes + size > limits.readBytes && out.length > 0) {
          out.push(
            `(output capped at ${limits.readBytes} bytes: showing lines ${offset}-${row.n - 1}${of}; read on with offset=${row.n})`,
          );
          return out.join('\n');
        }
        out.push(text);
        bytes += size;
      }
      const last = rows[rows.length - 1].n;
      if (more) out.push(`(showing lines ${offset}-${last}${of}; read on with offset=${last + 1})`);
      return out.join('\n');
    },
  };
}

export function writeTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'write',
    description:
      'Create a NEW file in the workspace (parent directories are created). It never overwrites: to change an existing file use edit or apply_patch. Returns the diff.',
    tags: ['write'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'New file path relative to the workspace root' },
        content: { type: 'string', description: 'The whole file content' },
        dry_run: DRY_RUN,
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    async handler(args) {
      const content = stringArg(args, 'content');
      const size = Buffer.byteLength(content);
      if (size > ctx.limits.maxFileBytes)
        throw new Error(
          `content is ${size} bytes, more than the ${ctx.limits.maxFileBytes}-byte limit; write the first part and add the rest with write_append`,
        );
      if (boolArg(args, 'dry_run')) {
        const { shown, real } = await ctx.workspace.resolve(args.path);
        const exists = await import('node:fs/promises')
          .then((fs) => fs.lstat(real))
          .then(
            () => true,
            () => false,
          );
        if (exists)
          throw new Error(
            `${shown} already exists; write only creates new files: use edit (or apply_patch) to change it, or write_append to add to it`,
          );
        return `Would create ${shown} (${size} bytes, ${lineCount(content)} lines)\n\n${await unifiedDiff(shown, null, content)}`;
      }
      const file = await ctx.workspace.openForWrite(args.path, 'create');
      try {
        await file.handle.writeFile(content, 'utf8');
      } finally {
        await file.handle.close();
      }
      return `Created ${file.shown} (${size} bytes, ${lineCount(content)} lines)\n\n${await unifiedDiff(file.shown, null, content)}`;
    },
  };
}

export function appendTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'write_append',
    description:
      'Append text to the end of a workspace file (created when missing), so a large file can be written in chunks. Nothing is inserted between chunks: include the newlines you want.',
    tags: ['write'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root' },
        content: { type: 'string', description: 'Text to append' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    async handler(args) {
      const content = stringArg(args, 'content');
      const file = await ctx.workspace.openForWrite(args.path, 'append');
      try {
        const size = file.stats.size + Buffer.byteLength(content);
        if (size > ctx.limits.maxFileBytes)
          throw new Error(
            `appending would make ${file.shown} ${size} bytes, more than the ${ctx.limits.maxFileBytes}-byte limit`,
          );
        const before = (await readAll(file, ctx.limits.maxFileBytes)).toString('utf8');
        await file.handle.appendFile(content, 'utf8');
        const verb = file.created ? 'Created' : 'Appended to';
        return `${verb} ${file.shown}: +${Buffer.byteLength(content)} bytes, now ${size} bytes\n\n${await unifiedDiff(file.shown, file.created ? null : before, before + content)}`;
      } finally {
        await file.handle.close();
      }
    },
  };
}

/** Where `edit` replaces: one index, or every index with `replace_all`. */
function locate(text: string, oldString: string, shown: string, args: JsonObject): number[] {
  const all = occurrences(text, oldString);
  const anchor = args.anchor;
  if (anchor !== undefined) {
    const m = typeof anchor === 'string' ? /^\s*(\d+):([0-9a-z]{4})\s*$/.exec(anchor) : null;
    if (!m) throw new Error('anchor must be "<line>:<hash>" as shown by read, e.g. "12:a3f9"');
    const line = Number(m[1]);
    const lines = splitLines(text);
    if (line < 1 || line > lines.length)
      throw new Error(`anchor line ${line} is past the end of ${shown} (${lines.length} lines)`);
    if (lineHash(lines[line - 1]) !== m[2]) {
      throw new Error(
        `${shown} changed since it was read: line ${line} is now ${JSON.stringify(lines[line - 1])} (hash ${lineHash(lines[line - 1])}, not ${m[2]}); read the file again`,
      );
    }
    const start = lineStartIndex(text, line);
    const end = lineStartIndex(text, line + 1);
    const hit = all.filter((i) => i >= start && (end === -1 || i < end));
    if (hit.length === 0) {
      const near = all.map((i) => lineNumberAt(text, i));
      throw new Error(
        `old_string does not start on line ${line} of ${shown}${near.length ? `; it starts on line(s) ${near.slice(0, 10).join(', ')}` : `\n${explainMiss(text.slice(start), oldString)}`}`,
      );
    }
    if (hit.length > 1)
      throw new Error(`old_string starts ${hit.length} times on line ${line} of ${shown}; add more context`);
    return hit;
  }
  if (all.length === 0) {
    const hint = explainMiss(text, oldString);
    throw new Error(
      `old_string not found in ${shown}${hint ? `.\n${hint}` : '; read the file again and copy the text exactly'}`,
    );
  }
  if (all.length > 1 && !boolArg(args, 'replace_all')) {
    const where = all.slice(0, 10).map((i) => lineNumberAt(text, i));
    throw new Error(
      `old_string is not unique in ${shown}: it occurs ${all.length} times (lines ${where.join(', ')}${all.length > 10 ? ', …' : ''}); add surrounding lines to make it unique, pass an anchor from read, or set replace_all`,
    );
  }
  if (boolArg(args, 'replace_all')) {
    // Non-overlapping, left to right.
    const picked: number[] = [];
    for (const i of all) if (picked.length === 0 || i >= picked[picked.length - 1] + oldString.length) picked.push(i);
    return picked;
  }
  return all;
}

export function editTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'edit',
    description:
      'Change an existing workspace file: replace old_string, which must occur exactly once, with new_string. Copy old_string exactly from read output (the text after the tab), ' +
      'with enough context to be unique. Optional anchor "<line>:<hash>" from read picks the occurrence starting on that line and refuses if the line changed. ' +
      'replace_all replaces every occurrence. Returns the diff.',
    tags: ['write'],
    inputs: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'File path relative to the workspace root' },
        old_string: {
          type: 'string',
          description: 'Exact text to replace; must occur once in the file (unless replace_all)',
        },
        new_string: { type: 'string', description: 'Replacement text' },
        anchor: {
          type: 'string',
          description: 'Optional "<line>:<hash>" from read: old_string must start on that line',
        },
        replace_all: { type: 'boolean', description: 'Replace every occurrence. Default false' },
        dry_run: DRY_RUN,
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    async handler(args) {
      let oldString = stringArg(args, 'old_string');
      let newString = stringArg(args, 'new_string');
      if (oldString === '')
        throw new Error('old_string must not be empty; to create a file use write, to add to one use write_append');
      if (oldString === newString) throw new Error('new_string is identical to old_string; nothing would change');
      let opened;
      try {
        opened = await readText(ctx, args.path, boolArg(args, 'dry_run') ? 'r' : 'r+');
      } catch (error) {
        if (error instanceof Error && / does not exist$/.test(error.message))
          throw new Error(`${error.message}; use write to create it`);
        throw error;
      }
      const { file, text } = opened;
      try {
        // A CRLF file edited with LF strings: use the file's line ending.
        if (
          text.includes('\r\n') &&
          !oldString.includes('\r\n') &&
          oldString.includes('\n') &&
          !text.includes(oldString)
        ) {
          oldString = oldString.replace(/\n/g, '\r\n');
          newString = newString.replace(/\r?\n/g, '\r\n');
        }
        if (hasReadPrefix(oldString) && !text.includes(oldString)) {
          throw new Error(
            `old_string contains the "line:hash<TAB>" prefix of read output; copy only the text after the tab.\n${explainMiss(text, oldString.replace(/^\s*\d+:[0-9a-z]{4}\t/gm, ''))}`.trimEnd(),
          );
        }
        const at = locate(text, oldString, file.shown, args);
        let next = '';
        let from = 0;
        for (const i of at) {
          next += text.slice(from, i) + newString;
          from = i + oldString.length;
        }
        next += text.slice(from);
        const size = Buffer.byteLength(next);
        if (size > ctx.limits.maxFileBytes)
          throw new Error(
            `the edit would make ${file.shown} ${size} bytes, more than the ${ctx.limits.maxFileBytes}-byte limit`,
          );
        const diff = await unifiedDiff(file.shown, text, next);
        const line = lineNumberAt(text, at[0]);
        const what =
          at.length > 1
            ? `replaced ${at.length} occurrences`
            : `replaced ${lineCount(oldString) || 1} line(s) with ${lineCount(newString)}`;
        if (boolArg(args, 'dry_run')) return `Would edit ${file.shown} at line ${line}: ${what}\n\n${diff}`;
        await rewrite(file, next);
        return `Edited ${file.shown} at line ${line}: ${what}\n\n${diff}`;
      } finally {
        await file.handle.close();
      }
    },
  };
}
