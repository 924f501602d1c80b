/** Text helpers for the code tools: lines, per-line hash anchors, near-miss search for `edit`. */

/** Splits text into lines (`\n` or `\r\n`), without a phantom last line after a final newline. */
export function splitLines(text: string): string[] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * A short, stable hash of one line's content (FNV-1a, 4 base-36 characters). `read` shows it next to the line
 * number; `edit` takes `line:hash` as an anchor and refuses when the line changed since it was read.
 */
export function lineHash(line: string): string {
  return finishHash(updateHash(HASH_START, line));
}

/** The incremental form of `lineHash`, for lines read in pieces. */
export const HASH_START = 0x811c9dc5;

export function updateHash(h: number, text: string): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

export function finishHash(h: number): string {
  return (h % 1_679_616).toString(36).padStart(4, '0');
}

/** 1-based line number of a character index. */
export function lineNumberAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Index of the first character of a 1-based line, or -1 when the text has fewer lines. */
export function lineStartIndex(text: string, line: number): number {
  let at = 0;
  for (let n = 1; n < line; n++) {
    const nl = text.indexOf('\n', at);
    if (nl === -1) return -1;
    at = nl + 1;
  }
  return at <= text.length ? at : -1;
}

/** Every index of `needle` in `haystack`, overlapping ones included (so `aa` in `aaa` is found twice). */
export function occurrences(haystack: string, needle: string, max = Infinity): number[] {
  const out: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1 && out.length < max; at = haystack.indexOf(needle, at + 1))
    out.push(at);
  return out;
}

export function lineCount(text: string): number {
  return text === '' ? 0 : splitLines(text).length;
}

/** A read-output prefix copied into old_string by mistake: `  12:ab3f<TAB>`. */
const READ_PREFIX = /^\s*\d+:[0-9a-z]{4}\t/m;

export function hasReadPrefix(text: string): boolean {
  return READ_PREFIX.test(text);
}

function collapse(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

function describeIndent(line: string): string {
  const lead = /^[ \t]*/.exec(line)![0];
  if (lead === '') return 'no indentation';
  const tabs = [...lead].filter((c) => c === '\t').length;
  const spaces = lead.length - tabs;
  return [tabs ? `${tabs} tab${tabs > 1 ? 's' : ''}` : '', spaces ? `${spaces} space${spaces > 1 ? 's' : ''}` : '']
    .filter(Boolean)
    .join(' + ');
}

function describeWhitespace(expected: string, actual: string): string {
  const parts: string[] = [];
  if (describeIndent(expected) !== describeIndent(actual))
    parts.push(`indentation: old_string has ${describeIndent(expected)}, the file has ${describeIndent(actual)}`);
  if (/\s$/.test(expected) !== /\s$/.test(actual) || (expected.trimEnd() !== expected && actual.trimEnd() !== actual)) {
    const te = expected.length - expected.trimEnd().length;
    const ta = actual.length - actual.trimEnd().length;
    if (te !== ta) parts.push(`trailing whitespace: old_string has ${te} character(s), the file has ${ta}`);
  }
  if (parts.length === 0) parts.push('inner whitespace differs');
  return parts.join('; ');
}

function bigrams(text: string): Map<string, number> {
  const m = new Map<string, number>();
  const s = collapse(text);
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient over character bigrams of the whitespace-collapsed texts (0..1). */
export function similarity(a: string, b: string): number {
  if (collapse(a) === collapse(b)) return 1;
  const x = bigrams(a);
  const y = bigrams(b);
  let total = 0;
  let common = 0;
  for (const n of x.values()) total += n;
  for (const n of y.values()) total += n;
  for (const [g, n] of x) common += Math.min(n, y.get(g) ?? 0);
  return total === 0 ? 0 : (2 * common) / total;
}

const MAX_SHOWN = 6;

/**
 * Explains why `needle` was not found in `text`: a match that differs only in whitespace (with the differences
 * spelled out), else the most similar region with its line numbers, else nothing useful.
 */
export function explainMiss(text: string, needle: string): string {
  const fileLines = splitLines(text);
  const want = splitLines(needle);
  while (want.length > 1 && want[want.length - 1].trim() === '') want.pop();
  if (want.length === 0 || fileLines.length === 0) return '';
  const n = want.length;
  const wantCollapsed = want.map(collapse);
  const hints: string[] = [];
  if (hasReadPrefix(needle))
    hints.push('old_string contains the "line:hash<TAB>" prefix of read output; copy only the text after the tab.');

  // 1. The same text with other whitespace.
  for (let start = 0; start + n <= fileLines.length; start++) {
    let ok = true;
    for (let k = 0; k < n && ok; k++) ok = collapse(fileLines[start + k]) === wantCollapsed[k];
    if (!ok) continue;
    const diffs: string[] = [];
    for (let k = 0; k < n && diffs.length < MAX_SHOWN; k++) {
      const a = want[k];
      const b = fileLines[start + k];
      if (a !== b && !(k === 0 && b.endsWith(a)) && !(k === n - 1 && b.startsWith(a))) {
        diffs.push(
          `  line ${start + k + 1}: old_string ${JSON.stringify(a)}, file ${JSON.stringify(b)} (${describeWhitespace(a, b)})`,
        );
      }
    }
    hints.push(
      `It matches ${n > 1 ? `lines ${start + 1}-${start + n}` : `line ${start + 1}`} if whitespace is ignored. Whitespace differences:\n${diffs.join('\n') || '  (line breaks differ)'}\nCopy the text exactly as read shows it.`,
    );
    return hints.join('\n');
  }

  // 2. The most similar region: rank by the first line, then score whole windows for the best few.
  const firstScores = fileLines.map((l, i) => ({ i, s: similarity(l, want[0]) }));
  firstScores.sort((a, b) => b.s - a.s);
  let best = { start: -1, score: 0 };
  for (const { i } of firstScores.slice(0, 8)) {
    const window = fileLines.slice(i, i + n).join('\n');
    const score = similarity(window, want.join('\n'));
    if (score > best.score) best = { start: i, score };
  }
  if (best.start >= 0 && best.score >= 0.5) {
    const end = Math.min(fileLines.length, best.start + n);
    const lines: string[] = [];
    for (let k = 0; best.start + k < end && lines.length < MAX_SHOWN; k++) {
      const a = want[k];
      const b = fileLines[best.start + k];
      if (a !== b)
        lines.push(
          `  line ${best.start + k + 1}: file ${JSON.stringify(b)}${a === undefined ? '' : `, old_string ${JSON.stringify(a)}`}`,
        );
    }
    hints.push(
      `The closest match is at line${n > 1 ? `s ${best.start + 1}-${end}` : ` ${best.start + 1}`} (${Math.round(best.score * 100)}% similar):\n${lines.join('\n')}`,
    );
  }
  return hints.join('\n');
}

/**
 * Characters that make a name unsafe to print bare in a line-oriented listing: control characters (a newline
 * would forge entries), Unicode line separators, `"` (the quote itself) and `:` (grep's `path:line:text`).
 */
const UNSAFE_NAME = /[\u0000-\u001f\u007f-\u009f\u2028\u2029":]|^[\s(]|\s$/;

/** What the tool descriptions tell the model about quoted names (docs/design/code-tools.md#quoted-names). */
export const QUOTED_NAMES_NOTE =
  'A path with a control character (such as a newline), a colon, a double quote, a leading "(" or leading/trailing space is shown as a JSON string ("dir/a\\nb.txt"); pass it back in that same quoted form.';

/**
 * A workspace path as ls, glob and grep print it: bare when it is plain, else as a JSON string literal with every
 * control and line-separator character escaped, so one entry is always one line and cannot pass for another.
 */
export function quotePath(path: string): string {
  if (!UNSAFE_NAME.test(path) && !path.split('/').some((s) => UNSAFE_NAME.test(s))) return path;
  return JSON.stringify(path).replace(
    /[\u007f-\u009f\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function decodeQuoted(text: string): string | undefined {
  if (text.length < 2 || !text.startsWith('"') || !text.endsWith('"')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The inverse of `quotePath` for paths the model sends back: a whole path written as a JSON string is decoded;
 * otherwise each `/`-separated segment written as one is (so `src/"a\nb"` from ls names that entry of `src`).
 */
export function unquotePath(path: string): string {
  const whole = decodeQuoted(path);
  if (whole !== undefined) return whole;
  if (!path.includes('"')) return path;
  return path
    .split('/')
    .map((segment) => {
      const decoded = decodeQuoted(segment);
      return decoded !== undefined && !decoded.includes('/') ? decoded : segment;
    })
    .join('/');
}
