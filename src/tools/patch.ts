/**
 * `apply_patch`: a unified diff applied atomically (every hunk of every file, or nothing), each hunk placed at
 * its line, else at the nearest offset, else with fuzz (context lines dropped at its edges), and the placement
 * reported. Parsing uses the `diff` package; placement is ours so offsets and fuzz can be reported.
 */
import type { DirectFunction } from '../index.js';
import { boolArg, stringArg, type CodeToolsContext } from './context.js';
import { unifiedDiff } from './diff.js';
import { looksBinary, readAll, rewrite, type OpenedFile } from './workspace.js';
import { errorMessage } from '../internal.js';

interface Hunk {
  oldStart: number;
  oldLines: number;
  lines: string[];
}

interface FilePatch {
  oldFileName?: string;
  newFileName?: string;
  hunks: Hunk[];
}

const MAX_FUZZ = 2;

function stripPrefix(name: string | undefined, strip: boolean): string | undefined {
  if (name === undefined) return undefined;
  const n = name.trim().split('\t')[0];
  if (n === '/dev/null' || n === '') return undefined;
  return strip && /^[ab]\//.test(n) ? n.slice(2) : n;
}

interface Placed {
  at: number;
  fuzz: number;
}

function matchesAt(lines: string[], expected: string[], at: number): boolean {
  if (at < 0 || at + expected.length > lines.length) return false;
  for (let k = 0; k < expected.length; k++) if (lines[at + k] !== expected[k]) return false;
  return true;
}

/** Finds where `expected` occurs nearest to `hint` (0-based), or -1. */
function nearest(lines: string[], expected: string[], hint: number): number {
  const max = Math.max(hint, lines.length - hint) + 1;
  for (let d = 0; d <= max; d++) {
    if (matchesAt(lines, expected, hint - d)) return hint - d;
    if (d > 0 && matchesAt(lines, expected, hint + d)) return hint + d;
  }
  return -1;
}

interface HunkLines {
  before: string[];
  after: string[];
  /** Leading and trailing context line counts (fuzz drops from these). */
  lead: number;
  trail: number;
  noNewlineAfter: boolean;
}

function splitHunk(h: Hunk): HunkLines {
  const before: string[] = [];
  const after: string[] = [];
  let noNewlineAfter = false;
  let last = '';
  for (const l of h.lines) {
    const tag = l[0];
    const body = l.slice(1);
    if (tag === '\\') {
      if (last === '+' || last === ' ') noNewlineAfter = true;
      continue;
    }
    if (tag === ' ' || tag === undefined) {
      before.push(body);
      after.push(body);
    } else if (tag === '-') before.push(body);
    else if (tag === '+') after.push(body);
    last = tag ?? ' ';
  }
  let lead = 0;
  while (lead < h.lines.length && h.lines[lead][0] === ' ') lead++;
  let trail = 0;
  for (let i = h.lines.length - 1; i >= 0 && (h.lines[i][0] === ' ' || h.lines[i][0] === '\\'); i--)
    if (h.lines[i][0] === ' ') trail++;
  return { before, after, lead, trail, noNewlineAfter };
}

/** Applies every hunk to `text`; throws naming the first hunk that does not fit. */
function applyHunks(text: string, hunks: Hunk[], shown: string): { text: string; notes: string[] } {
  const crlf = text.includes('\r\n');
  const endsWithNewline = text === '' || /\n$/.test(text);
  let lines = text === '' ? [] : text.replace(/\r?\n$/, '').split(/\r?\n/);
  let eofNewline = endsWithNewline;
  const notes: string[] = [];
  let shift = 0;
  hunks.forEach((hunk, index) => {
    const h = splitHunk(hunk);
    const hint = Math.max(0, (hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1) + shift);
    let placed: Placed | undefined;
    for (let fuzz = 0; fuzz <= MAX_FUZZ && !placed; fuzz++) {
      const dropLead = Math.min(fuzz, h.lead);
      const dropTrail = Math.min(fuzz, h.trail);
      if (fuzz > 0 && dropLead === 0 && dropTrail === 0) break;
      const expected = h.before.slice(dropLead, h.before.length - dropTrail);
      if (expected.length === 0 && h.before.length > 0) break;
      const at = nearest(lines, expected, hint + dropLead);
      if (at >= 0) placed = { at: at - dropLead, fuzz };
      if (placed) {
        const replacement = h.after.slice(dropLead, h.after.length - dropTrail);
        lines = [...lines.slice(0, at), ...replacement, ...lines.slice(at + expected.length)];
        shift += replacement.length - expected.length;
        const offset = placed.at - (hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1);
        const parts: string[] = [];
        if (offset !== 0) parts.push(`offset ${offset > 0 ? '+' : ''}${offset} line(s)`);
        if (fuzz > 0) parts.push(`fuzz ${fuzz}: ignored ${fuzz} context line(s) at its edges`);
        if (parts.length)
          notes.push(`${shown}: hunk ${index + 1} applied at line ${placed.at + 1} (${parts.join(', ')})`);
        if (at + replacement.length >= lines.length) eofNewline = !h.noNewlineAfter;
      }
    }
    if (!placed) {
      const first = h.before.find((l) => l.trim() !== '');
      const near = first === undefined ? -1 : lines.findIndex((l) => l.trim() === first.trim());
      throw new Error(
        `hunk ${index + 1} of ${shown} (@@ -${hunk.oldStart},${hunk.oldLines}) does not match the file, even with fuzz ${MAX_FUZZ}` +
          (near >= 0
            ? `; its first line ${JSON.stringify(first)} is at line ${near + 1}: read the file and regenerate the patch`
            : '; read the file and regenerate the patch'),
      );
    }
  });
  const nl = crlf ? '\r\n' : '\n';
  return { text: lines.length === 0 ? '' : lines.join(nl) + (eofNewline ? nl : ''), notes };
}

interface Planned {
  shown: string;
  kind: 'create' | 'modify' | 'delete';
  before: string | null;
  after: string | null;
  file?: OpenedFile;
  /** The file a create made (its handle closed), so an undo removes that very file. */
  created?: OpenedFile;
  path: string;
}

export function applyPatchTool(ctx: CodeToolsContext): DirectFunction {
  return {
    name: 'apply_patch',
    description:
      'Apply a unified diff (as made by `diff -u` or `git diff`) to workspace files. Atomic: every hunk of every file applies, or nothing changes. ' +
      'Hunks that moved are found nearby (offset) or with up to 2 context lines ignored (fuzz), and both are reported. /dev/null creates or deletes a file. Returns the diff.',
    tags: ['write'],
    inputs: {
      type: 'object',
      properties: {
        patch: { type: 'string', description: 'The unified diff text' },
        dry_run: { type: 'boolean', description: 'Only check the patch and show the result; change nothing' },
      },
      required: ['patch'],
      additionalProperties: false,
    },
    async handler(args) {
      const patchText = stringArg(args, 'patch');
      const { parsePatch } = await import('diff');
      let patches: FilePatch[];
      try {
        patches = parsePatch(patchText) as FilePatch[];
      } catch (error) {
        throw new Error(`patch is not a valid unified diff: ${errorMessage(error)}`);
      }
      patches = patches.filter((p) => p.hunks.length > 0 || p.oldFileName || p.newFileName);
      if (patches.length === 0 || patches.every((p) => p.hunks.length === 0))
        throw new Error(
          'patch holds no hunks; expected a unified diff with "--- a/file", "+++ b/file" and "@@ -l,n +l,n @@" lines',
        );
      const dry = boolArg(args, 'dry_run');
      const plans: Planned[] = [];
      const notes: string[] = [];
      try {
        for (const p of patches) {
          const strip = /^a\//.test(p.oldFileName ?? '') || /^b\//.test(p.newFileName ?? '');
          const oldName = stripPrefix(p.oldFileName, strip);
          const newName = stripPrefix(p.newFileName, strip);
          const name = newName ?? oldName;
          if (!name) throw new Error('a file in the patch has neither an old nor a new name');
          if (oldName && newName && oldName !== newName)
            throw new Error(
              `renames are not supported (${oldName} → ${newName}); patch the content and use bash to move the file`,
            );
          if (!oldName) {
            const { shown, real } = await ctx.workspace.resolve(name);
            const exists = await import('node:fs/promises')
              .then((fs) => fs.lstat(real))
              .then(
                () => true,
                () => false,
              );
            if (exists) throw new Error(`the patch creates ${shown}, which already exists`);
            const { text, notes: n } = applyHunks('', p.hunks, shown);
            plans.push({ shown, kind: 'create', before: null, after: text, path: name });
            notes.push(...n);
            continue;
          }
          const file = await ctx.workspace.openExisting(name, dry ? 'r' : 'r+');
          const plan: Planned = {
            shown: file.shown,
            kind: newName ? 'modify' : 'delete',
            before: null,
            after: null,
            file,
            path: name,
          };
          plans.push(plan);
          if (plans.some((q) => q !== plan && q.file && q.file.real === file.real))
            throw new Error(`the patch changes ${file.shown} twice; merge its hunks into one section`);
          const bytes = await readAll(file, ctx.limits.maxFileBytes);
          if (looksBinary(bytes)) throw new Error(`${file.shown} looks like a binary file`);
          plan.before = bytes.toString('utf8');
          const { text, notes: n } = applyHunks(plan.before, p.hunks, file.shown);
          notes.push(...n);
          if (!newName) {
            if (text.trim() !== '')
              throw new Error(`the patch deletes ${file.shown} but its hunks do not remove all of its content`);
            plan.after = null;
          } else plan.after = text;
          if (plan.after !== null && Buffer.byteLength(plan.after) > ctx.limits.maxFileBytes)
            throw new Error(`the patch would make ${file.shown} larger than the ${ctx.limits.maxFileBytes}-byte limit`);
        }
        const diffs = await Promise.all(plans.map((p) => unifiedDiff(p.shown, p.before, p.after)));
        const summary = plans
          .map((p) => `${p.kind === 'create' ? 'created' : p.kind === 'delete' ? 'deleted' : 'modified'} ${p.shown}`)
          .join(', ');
        const report = [`${dry ? 'Would apply' : 'Applied'} the patch: ${summary}`, ...notes, '', ...diffs].join('\n');
        if (dry) return report;
        await commit(ctx, plans);
        return report;
      } finally {
        await Promise.all(plans.map((p) => p.file?.handle.close().catch(() => undefined)));
      }
    },
  };
}

/** Writes every planned change; on a failure, restores the files already written. */
async function commit(ctx: CodeToolsContext, plans: Planned[]): Promise<void> {
  const done: Planned[] = [];
  try {
    for (const p of plans) {
      if (p.kind === 'create') {
        const file = await ctx.workspace.openForWrite(p.path, 'create');
        try {
          await file.handle.writeFile(p.after ?? '', 'utf8');
        } finally {
          await file.handle.close();
        }
        p.created = file;
      } else if (p.kind === 'modify') {
        await rewrite(p.file!, p.after ?? '');
      } else {
        await ctx.workspace.remove(p.file!);
      }
      done.push(p);
    }
  } catch (error) {
    for (const p of done.reverse()) {
      try {
        if (p.kind === 'modify') await rewrite(p.file!, p.before ?? '');
        else if (p.kind === 'create') await ctx.workspace.remove(p.created!);
        else {
          const file = await ctx.workspace.openForWrite(p.path, 'create');
          try {
            await file.handle.writeFile(p.before ?? '', 'utf8');
          } finally {
            await file.handle.close();
          }
        }
      } catch {
        // Best effort: the error below names the failure.
      }
    }
    throw new Error(`applying the patch failed and the files already changed were restored: ${errorMessage(error)}`, {
      cause: error,
    });
  }
}
