/**
 * Bash lexical knowledge shared by the context analysis (docs/design/threat-model.md#cli-evaluating-contexts):
 * placeholder and variable-reference patterns, the command tables (wrappers, shells, interpreters, dangerous
 * variables) and small text helpers. Split from shell-contexts.ts, which stays the entry point.
 */

/** `ph:<argument>` for a placeholder, `var:<name>` for a shell variable, `var:@` for positional parameters. */
export type Ref = string;

// A name never contains another placeholder's start: without that, `UTCP_ARG_` repeated made every start scan to the
// end of the template (quadratic: 9 s for 180 KB). Same rule as rewrite-placeholders.ts (docs/design/security.md#untrusted-regex).
export const PLACEHOLDERS = /UTCP_ARG_((?:(?!UTCP_(?:ARG|VAR)_)[A-Za-z0-9_])+?)_UTCP_END/g;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/g;
export const VAR_REF = /\$(?:\{[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*])|([A-Za-z_][A-Za-z0-9_]*)|([0-9@*]))/g;
export const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/;
export const RESERVED = new Set([
  '{',
  '}',
  '!',
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'esac',
  'time',
  'coproc',
]);
export const BREAKS = ' \t\n;&|<>()';
/** Variables whose value the shell or the loader runs or trusts as a path to code. */
export const DANGEROUS_VARIABLES = new Set([
  'BASH_ENV',
  'ENV',
  'PS1',
  'PS2',
  'PS3',
  'PS4',
  'PROMPT_COMMAND',
  'SHELLOPTS',
  'BASHOPTS',
  'PATH',
  'CDPATH',
  'GLOBIGNORE',
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'BASH_LOADABLES_PATH',
  'NODE_OPTIONS',
  'PYTHONSTARTUP',
  'PYTHONPATH',
  'PERL5OPT',
  'RUBYOPT',
]);
/** Commands that only run their arguments as another command (options skipped). */
export const WRAPPERS = new Set([
  'command',
  'builtin',
  'exec',
  'nohup',
  'nice',
  'env',
  'sudo',
  'doas',
  'xargs',
  'timeout',
  'stdbuf',
  'setsid',
  'chrt',
  'ionice',
  'taskset',
  'time',
  'unbuffer',
  'flock',
]);
const SHELLS = /^(?:ba|da|z|k|mk|a|c|tc|fi|busybox |)sh$|^busybox$/;
/** Interpreters and the flags that take program text: `bash -c CODE`, `python3 -c CODE`, `node -e CODE`, ... */
export const INTERPRETERS: Array<{ name: RegExp; code: RegExp; stdin: boolean }> = [
  { name: SHELLS, code: /^-[a-zA-Z]*c[a-zA-Z]*$/, stdin: true },
  { name: /^python[0-9.]*$|^pypy[0-9.]*$/, code: /^-[a-zA-Z]*c$/, stdin: true },
  { name: /^(?:node|nodejs|bun|deno)$/, code: /^(?:-[a-zA-Z]*[ep]|--eval|--print|eval)$/, stdin: true },
  { name: /^perl[0-9.]*$/, code: /^-[a-zA-Z]*[eE]$/, stdin: true },
  { name: /^ruby[0-9.]*$/, code: /^-[a-zA-Z]*e$/, stdin: true },
  { name: /^php[0-9.]*$/, code: /^-[a-zA-Z]*r$/, stdin: true },
  { name: /^(?:lua[0-9.]*|luajit|Rscript|osascript|tclsh|wish|expect)$/, code: /^-e$/, stdin: true },
  { name: /^(?:pwsh|powershell)(?:\.exe)?$/i, code: /^-(?:c|command|e|encodedcommand|ec)$/i, stdin: true },
];

/** Placeholders (which are substituted even inside single quotes) and `$var` references the shell expands in raw text. */
export function refsIn(raw: string): Set<Ref> {
  const refs = new Set<Ref>();
  for (const m of raw.matchAll(PLACEHOLDERS)) refs.add(`ph:${m[1]}`);
  for (const m of withoutSingleQuoted(raw).matchAll(VAR_REF)) {
    const name = m[1] ?? m[2] ?? m[3];
    refs.add(/^[0-9@*]+$/.test(name) ? 'var:@' : `var:${name}`);
  }
  return refs;
}

/** `raw` without its single-quoted parts (outside double quotes), where `$name` is literal text. */
function withoutSingleQuoted(raw: string): string {
  if (!raw.includes("'")) return raw;
  let out = '';
  let double = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (c === '\\') {
      out += raw.slice(i, i + 2);
      i++;
    } else if (c === '"') {
      double = !double;
      out += c;
    } else if (c === "'" && !double) {
      const end = raw.indexOf("'", i + 1);
      i = end === -1 ? raw.length : end;
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

/** Like `refsIn`, plus bare identifiers: arithmetic evaluates the value of every variable it names. */
export function arithmeticRefs(raw: string): Set<Ref> {
  const refs = refsIn(raw);
  for (const m of raw.replace(PLACEHOLDERS, ' ').matchAll(IDENT)) refs.add(`var:${m[0]}`);
  return refs;
}

/** The literal text of a word with quotes removed (for recognising command names and flags). */
export function unquote(raw: string): string {
  return raw.replace(/\\(.)/g, '$1').replace(/['"]/g, '');
}

export function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}

/** Index of the bracket closing the one at `open` (quotes skipped), or the end of `text`. */
export function matching(text: string, open: number, opener: string, closer: string): number {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') {
      j++;
    } else if (c === "'" && opener !== '[') {
      const end = text.indexOf("'", j + 1);
      j = end === -1 ? text.length : end;
    } else if (c === opener) {
      depth++;
    } else if (c === closer) {
      depth--;
      if (depth === 0) return j;
    }
  }
  return text.length;
}
