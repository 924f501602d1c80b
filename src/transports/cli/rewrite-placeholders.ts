/**
 * The quote-state scanner (docs/design/transports.md#cli, docs/design/security.md#cli-injection): turns every `UTCP_ARG_<name>_UTCP_END`
 * placeholder of a command template into a reference to the environment variable that holds the
 * argument value, chosen by the quoting context the placeholder sits in. Values never enter the
 * script text, so a wrong guess about the context can only change word splitting, never run code.
 * Pure: no I/O, no randomness.
 */
import { UtcpError } from '../../core/errors.js';

/** The shell dialect a script is written for. */
export type ShellDialect = 'bash' | 'powershell';

export interface RewriteResult {
  /** The command text with placeholders replaced by environment references. */
  text: string;
  /** Argument names referenced, de-duplicated, in first-seen order. */
  names: string[];
  /** Variable names referenced through `UTCP_VAR_<name>_UTCP_END` (config variables deferred by the client). */
  variables: string[];
}

/**
 * Placeholder at a position; the name is lazy, so `UTCP_ARG_x_UTCP_END123` ends at the first `_UTCP_END`.
 * `UTCP_VAR_<name>_UTCP_END` marks a config variable the client did not write into the text. A name never contains
 * another placeholder's start, so trying every index stays linear (shell-contexts.ts has the same rule).
 */
const PLACEHOLDER = /UTCP_(ARG|VAR)_((?:(?!UTCP_(?:ARG|VAR)_)[A-Za-z0-9_])+?)_UTCP_END/y;

/** Environment variable carrying one argument value: `__UTCP_ARG_<nonce>_<name>`. */
export function argEnvName(nonce: string, name: string): string {
  return `__UTCP_ARG_${nonce}_${name}`;
}

/** Environment variable carrying one config variable's value: `__UTCP_VAR_<nonce>_<name>`. */
export function varEnvName(nonce: string, name: string): string {
  return `__UTCP_VAR_${nonce}_${name}`;
}

/** `name` is `ARG:<argument>` or `VAR:<variable>`. */
function placeholderAt(text: string, index: number): { name: string; length: number } | undefined {
  PLACEHOLDER.lastIndex = index;
  const m = PLACEHOLDER.exec(text);
  return m ? { name: `${m[1]}:${m[2]}`, length: m[0].length } : undefined;
}

function placeholderText(name: string): string {
  return `UTCP_${name.slice(0, 3)}_${name.slice(4)}_UTCP_END`;
}

/**
 * One command read once (docs/design/transports.md#cli-fast-path): its text cut at each placeholder, so that a call
 * only joins the pieces with the references of its own nonce instead of reading the command again.
 * `text = parts[0] + ref(tagged[0]) + parts[1] + … + parts[n]`, with `tagged[i]` `ARG:<name>` or `VAR:<name>`.
 */
export interface PlaceholderPlan {
  readonly parts: readonly string[];
  readonly tagged: readonly string[];
  /** Argument names referenced, de-duplicated, in first-seen order. */
  readonly names: readonly string[];
  /** Config variable names referenced, de-duplicated, in first-seen order. */
  readonly variables: readonly string[];
}

/**
 * Reads one command template: where each placeholder goes and in which quoting context (no nonce yet).
 * Throws `UtcpError('INVALID_MANUAL')` for a placeholder that cannot be referenced safely
 * (PowerShell single quotes, a bash here-document with a quoted delimiter).
 */
export function planPlaceholders(command: string, dialect: ShellDialect): PlaceholderPlan {
  const names: string[] = [];
  const variables: string[] = [];
  const tagged: string[] = [];
  // A command holds no NUL (the transport refuses one), so NUL can stand for each reference while reading.
  const ref = (tag: string) => {
    const name = tag.slice(4);
    const list = tag.startsWith('ARG:') ? names : variables;
    if (!list.includes(name)) list.push(name);
    tagged.push(tag);
    return '\0';
  };
  const text = dialect === 'bash' ? rewriteBash(command, ref) : rewritePowerShell(command, ref);
  const parts = text.split('\0');
  if (parts.length !== tagged.length + 1)
    throw new UtcpError('INVALID_MANUAL', 'cli: a command contains a NUL character');
  return { parts, tagged, names, variables };
}

/** The command text of `plan` for one call: each reference names the environment variable of `nonce`. */
export function renderPlan(plan: PlaceholderPlan, nonce: string): string {
  let text = plan.parts[0];
  for (let i = 0; i < plan.tagged.length; i++) {
    const tag = plan.tagged[i];
    const name = tag.slice(4);
    text += (tag.startsWith('ARG:') ? argEnvName(nonce, name) : varEnvName(nonce, name)) + plan.parts[i + 1];
  }
  return text;
}

/**
 * Replaces the placeholders of one command with quote-aware references to `__UTCP_ARG_<nonce>_<name>`.
 * Throws `UtcpError('INVALID_MANUAL')` for a placeholder that cannot be referenced safely
 * (PowerShell single quotes, a bash here-document with a quoted delimiter).
 */
export function rewritePlaceholders(command: string, dialect: ShellDialect, nonce: string): RewriteResult {
  const plan = planPlaceholders(command, dialect);
  return { text: renderPlan(plan, nonce), names: [...plan.names], variables: [...plan.variables] };
}

// ------------------------------------------------------------------------------------------ bash

type BashQuote = 'none' | 'double' | 'single' | 'ansi';

/** One nesting level: the script itself, a `$( … )` command substitution or a `` `…` `` one. */
interface BashFrame {
  kind: 'top' | 'paren' | 'backtick';
  quote: BashQuote;
  /** Unbalanced `(` seen unquoted inside a `$( … )`, so a nested `( … )` does not close it. */
  depth: number;
  /** `$(( … ))`: `<<` is a shift, `#` a base prefix. */
  arithmetic: boolean;
}

interface HereDoc {
  delimiter: string;
  quoted: boolean;
  stripTabs: boolean;
}

const BASH_WORD_BREAK = ' \t\n;&|()<>';

function bashReference(quote: BashQuote | 'heredoc', v: string): string {
  switch (quote) {
    case 'none':
      return `"$${v}"`;
    case 'double':
    case 'heredoc':
      return `\${${v}}`;
    case 'single':
      return `'"$${v}"'`; // close, double-quote, reopen
    case 'ansi':
      return `'"$${v}"$'`; // close $'…', double-quote, reopen $'…'
  }
}

/**
 * Bash: escapes with `\` outside quotes and `\"` `\\` `` \` `` `\$` `\<newline>` inside double quotes;
 * `'…'`, `$'…'`, `"…"`, `$( … )` and backticks (each with its own quote state), comments and
 * here-documents are tracked. An escaped placeholder (`\UTCP_ARG_…` outside quotes) stays literal.
 * Known gaps (rare in command templates): `case` patterns with an unbalanced `)` inside `$( … )`;
 * a misread context only changes word splitting of the value, never what is executed.
 */
function rewriteBash(cmd: string, ref: (name: string) => string): string {
  let out = '';
  const frames: BashFrame[] = [{ kind: 'top', quote: 'none', depth: 0, arithmetic: false }];
  const pending: HereDoc[] = [];
  let i = 0;
  while (i < cmd.length) {
    const f = frames[frames.length - 1];
    const ph = placeholderAt(cmd, i);
    if (ph) {
      out += bashReference(f.quote, ref(ph.name));
      i += ph.length;
      continue;
    }
    const c = cmd[i];
    if (f.quote === 'single') {
      if (c === "'") f.quote = 'none';
      out += c;
      i++;
      continue;
    }
    if (f.quote === 'ansi') {
      if (c === '\\') {
        out += cmd.slice(i, i + 2);
        i += 2;
        continue;
      }
      if (c === "'") f.quote = 'none';
      out += c;
      i++;
      continue;
    }
    if (f.quote === 'double') {
      if (c === '\\') {
        const n = cmd[i + 1];
        if (n !== undefined && '"\\`$\n'.includes(n)) {
          out += c + n;
          i += 2;
        } else {
          // A literal backslash; doubled when a reference follows, or it would escape the reference's `$`.
          out += placeholderAt(cmd, i + 1) ? '\\\\' : c;
          i++;
        }
        continue;
      }
      if (c === '"') {
        f.quote = 'none';
        out += c;
        i++;
        continue;
      }
      const opened = openSubstitution(cmd, i, frames);
      if (opened) {
        out += opened;
        i += opened.length;
        continue;
      }
      out += c;
      i++;
      continue;
    }
    // Unquoted.
    if (c === '\\') {
      out += cmd.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === "'") {
      f.quote = 'single';
      out += c;
      i++;
      continue;
    }
    if (c === '"') {
      f.quote = 'double';
      out += c;
      i++;
      continue;
    }
    if (c === '$' && cmd[i + 1] === "'") {
      f.quote = 'ansi';
      out += "$'";
      i += 2;
      continue;
    }
    if (c === '#' && !f.arithmetic && (i === 0 || BASH_WORD_BREAK.includes(cmd[i - 1]))) {
      const end = cmd.indexOf('\n', i);
      const stop = end === -1 ? cmd.length : end;
      out += cmd.slice(i, stop);
      i = stop;
      continue;
    }
    const opened = openSubstitution(cmd, i, frames);
    if (opened) {
      out += opened;
      i += opened.length;
      continue;
    }
    if (f.kind === 'paren' && c === '(') f.depth++;
    if (f.kind === 'paren' && c === ')') {
      if (f.depth === 0) frames.pop();
      else f.depth--;
      out += c;
      i++;
      continue;
    }
    if (c === '<' && cmd[i + 1] === '<' && cmd[i + 2] === '<') {
      out += '<<<'; // a here-string, not a here-document
      i += 3;
      continue;
    }
    if (c === '<' && cmd[i + 1] === '<' && !f.arithmetic) {
      const parsed = parseHereDocOperator(cmd, i);
      if (parsed) {
        pending.push(parsed.doc);
        out += cmd.slice(i, parsed.end);
        i = parsed.end;
        continue;
      }
    }
    if (c === '\n' && pending.length > 0) {
      out += c;
      i++;
      for (const doc of pending.splice(0)) {
        const body = rewriteHereDocBody(cmd, i, doc, ref);
        out += body.text;
        i = body.end;
      }
      continue;
    }
    out += c;
    i++;
  }
  return out;
}

/** Opens `$(`, `$((` or a backtick substitution (or closes the current backtick one); returns the consumed text. */
function openSubstitution(cmd: string, i: number, frames: BashFrame[]): string | undefined {
  const c = cmd[i];
  if (c === '$' && cmd[i + 1] === '(') {
    const arithmetic = cmd[i + 2] === '(';
    frames.push({ kind: 'paren', quote: 'none', depth: arithmetic ? 1 : 0, arithmetic });
    return arithmetic ? '$((' : '$(';
  }
  if (c === '`') {
    const f = frames[frames.length - 1];
    if (f.kind === 'backtick') frames.pop();
    else frames.push({ kind: 'backtick', quote: 'none', depth: 0, arithmetic: false });
    return '`';
  }
  return undefined;
}

/** Parses `<<[-]WORD` at `i`; returns undefined when no delimiter word follows. */
function parseHereDocOperator(cmd: string, i: number): { doc: HereDoc; end: number } | undefined {
  let j = i + 2;
  const stripTabs = cmd[j] === '-';
  if (stripTabs) j++;
  while (cmd[j] === ' ' || cmd[j] === '\t') j++;
  let delimiter = '';
  let quoted = false;
  while (j < cmd.length && !BASH_WORD_BREAK.includes(cmd[j])) {
    const c = cmd[j];
    if (c === "'" || c === '"') {
      quoted = true;
      const close = cmd.indexOf(c, j + 1);
      const stop = close === -1 ? cmd.length : close;
      delimiter += cmd.slice(j + 1, stop);
      j = stop + 1;
    } else if (c === '\\') {
      quoted = true;
      delimiter += cmd[j + 1] ?? '';
      j += 2;
    } else {
      delimiter += c;
      j++;
    }
  }
  // An unquoted number or `$x` after `<<` is far more likely an arithmetic shift (`(( a << 2 ))`).
  if (!quoted && (delimiter === '' || /^\d+$/.test(delimiter) || delimiter.startsWith('$'))) return undefined;
  return { doc: { delimiter, quoted, stripTabs }, end: Math.min(j, cmd.length) };
}

/** Copies a here-document body starting at `start`, up to and including its delimiter line. */
function rewriteHereDocBody(
  cmd: string,
  start: number,
  doc: HereDoc,
  ref: (name: string) => string,
): { text: string; end: number } {
  let text = '';
  let i = start;
  while (i < cmd.length) {
    const nl = cmd.indexOf('\n', i);
    const lineEnd = nl === -1 ? cmd.length : nl;
    const line = cmd.slice(i, lineEnd);
    const next = nl === -1 ? cmd.length : nl + 1;
    if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
      return { text: text + cmd.slice(i, next), end: next };
    }
    for (let k = 0; k < line.length; ) {
      const ph = placeholderAt(line, k);
      if (ph) {
        if (doc.quoted) {
          throw new UtcpError(
            'INVALID_MANUAL',
            `cli: placeholder ${placeholderText(ph.name)} is inside a here-document with a quoted delimiter, where it cannot be expanded`,
          );
        }
        text += bashReference('heredoc', ref(ph.name));
        k += ph.length;
        continue;
      }
      const c = line[k];
      if (!doc.quoted && c === '\\' && k + 1 < line.length && '$`\\'.includes(line[k + 1])) {
        text += line.slice(k, k + 2);
        k += 2;
        continue;
      }
      if (!doc.quoted && c === '\\' && placeholderAt(line, k + 1)) {
        text += '\\\\';
        k++;
        continue;
      }
      text += c;
      k++;
    }
    text += cmd.slice(lineEnd, next);
    i = next;
  }
  return { text, end: cmd.length };
}

// ------------------------------------------------------------------------------------ PowerShell

type PsQuote = 'none' | 'double' | 'single' | 'here-double' | 'here-single' | 'block-comment';

// PowerShell also treats typographic quotes as quote characters.
const PS_SINGLE = "'\u2018\u2019\u201A\u201B";
const PS_DOUBLE = '"\u201C\u201D\u201E';
const PS_WORD_BREAK = ' \t\r\n;|&(){}';

/**
 * PowerShell: backtick escapes outside quotes and inside `"…"`, doubled quotes (`""`, `''`) inside
 * strings, here-strings `@"…"@` / `@'…'@`, line and block comments. Unquoted and double-quoted
 * placeholders become `${env:V}`; single-quoted ones are refused (nothing expands there).
 */
function rewritePowerShell(cmd: string, ref: (name: string) => string): string {
  let out = '';
  let quote: PsQuote = 'none';
  let i = 0;
  while (i < cmd.length) {
    const ph = placeholderAt(cmd, i);
    if (ph && quote !== 'block-comment') {
      if (quote === 'single' || quote === 'here-single') {
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: placeholder ${placeholderText(ph.name)} is single-quoted; PowerShell does not expand single-quoted strings (use double quotes or none)`,
        );
      }
      out += `\${env:${ref(ph.name)}}`;
      i += ph.length;
      continue;
    }
    const c = cmd[i];
    switch (quote) {
      case 'block-comment':
        if (c === '#' && cmd[i + 1] === '>') {
          out += '#>';
          i += 2;
          quote = 'none';
          continue;
        }
        break;
      case 'single':
        if (PS_SINGLE.includes(c)) {
          if (PS_SINGLE.includes(cmd[i + 1] ?? '')) {
            out += cmd.slice(i, i + 2);
            i += 2;
            continue;
          }
          quote = 'none';
        }
        break;
      case 'double':
        if (c === '`') {
          out += cmd.slice(i, i + 2);
          i += 2;
          continue;
        }
        if (PS_DOUBLE.includes(c)) {
          if (PS_DOUBLE.includes(cmd[i + 1] ?? '')) {
            out += cmd.slice(i, i + 2);
            i += 2;
            continue;
          }
          quote = 'none';
        }
        break;
      case 'here-single':
      case 'here-double': {
        const closer = quote === 'here-single' ? "'@" : '"@';
        if (
          c === '\n' &&
          cmd
            .slice(i + 1)
            .replace(/^[ \t]*/, '')
            .startsWith(closer)
        ) {
          const at = cmd.indexOf(closer, i + 1);
          out += cmd.slice(i, at + 2);
          i = at + 2;
          quote = 'none';
          continue;
        }
        if (quote === 'here-double' && c === '`') {
          out += cmd.slice(i, i + 2);
          i += 2;
          continue;
        }
        break;
      }
      case 'none': {
        if (c === '`') {
          out += cmd.slice(i, i + 2);
          i += 2;
          continue;
        }
        if (c === '@' && (cmd[i + 1] === '"' || cmd[i + 1] === "'") && /^[ \t]*\r?\n/.test(cmd.slice(i + 2))) {
          quote = cmd[i + 1] === '"' ? 'here-double' : 'here-single';
          out += cmd.slice(i, i + 2);
          i += 2;
          continue;
        }
        if (c === '<' && cmd[i + 1] === '#') {
          quote = 'block-comment';
          out += '<#';
          i += 2;
          continue;
        }
        if (c === '#' && (i === 0 || PS_WORD_BREAK.includes(cmd[i - 1]))) {
          const end = cmd.indexOf('\n', i);
          const stop = end === -1 ? cmd.length : end;
          out += cmd.slice(i, stop);
          i = stop;
          continue;
        }
        if (PS_SINGLE.includes(c)) quote = 'single';
        else if (PS_DOUBLE.includes(c)) quote = 'double';
        break;
      }
    }
    out += c;
    i++;
  }
  return out;
}
