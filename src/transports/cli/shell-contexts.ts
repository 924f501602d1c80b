/**
 * Where argument values may land in a cli template (docs/design/threat-model.md#cli-evaluating-contexts).
 *
 * Values reach the shell only as environment variables (rewrite-placeholders.ts), so plain command
 * arguments, strings and here-documents can never run them. But some shell constructs evaluate the TEXT
 * of a variable again: arithmetic (`$(( ))`, `(( ))`, `let`, `[[ a -gt b ]]`, array subscripts,
 * `${x:offset}`, `declare -i`) evaluates `a[$(cmd)]` and runs `cmd`; name-taking builtins (`printf -v`,
 * `read`, `declare`, `test -v`, `${!x}`) do the same with a name such as `a[$(cmd)]`; and `eval`,
 * `source`, `trap`, `${x@P}`, `bash -c`, `python -c`, `awk '…'`, `sed '…'`, a shell reading its program
 * from a pipe… run the text as code.
 *
 * This module reads the template (never a value) and reports, before anything runs:
 * - arguments that reach an arithmetic or name context, directly or through shell variables assigned
 *   from them (including `CMD_<i>_OUTPUT` of a step that used them, `read` targets and positional
 *   parameters): their value must then be a plain integer literal, which such contexts cannot misuse;
 * - arguments that reach a code context: the template is refused (no value is ever safe there).
 * A value routed through a file or another program and back into such a context is beyond what a
 * reading of the template can see; docs/design/threat-model.md says so.
 */
import { UtcpError } from '../../core/errors.js';

export interface ContextReport {
  /** Argument name → the construct that needs its value to be an integer literal. */
  integers: Map<string, string>;
}

type Ref = string; // `ph:<argument>` for a placeholder, `var:<name>` for a shell variable, `var:@` for positional parameters

interface Event {
  refs: Set<Ref>;
  construct: string;
  step: number;
}

// A name never contains another placeholder's start: without that, `UTCP_ARG_` repeated made every start scan to the
// end of the template (quadratic: 9 s for 180 KB). Same rule as rewrite-placeholders.ts (docs/design/security.md#untrusted-regex).
const PLACEHOLDERS = /UTCP_ARG_((?:(?!UTCP_(?:ARG|VAR)_)[A-Za-z0-9_])+?)_UTCP_END/g;
const IDENT = /[A-Za-z_][A-Za-z0-9_]*/g;
const VAR_REF = /\$(?:\{[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*])|([A-Za-z_][A-Za-z0-9_]*)|([0-9@*]))/g;
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?=/;
const RESERVED = new Set([
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
const BREAKS = ' \t\n;&|<>()';
/** Variables whose value the shell or the loader runs or trusts as a path to code. */
const DANGEROUS_VARIABLES = new Set([
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
const WRAPPERS = new Set([
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
const INTERPRETERS: Array<{ name: RegExp; code: RegExp; stdin: boolean }> = [
  { name: SHELLS, code: /^-[a-zA-Z]*c[a-zA-Z]*$/, stdin: true },
  { name: /^python[0-9.]*$|^pypy[0-9.]*$/, code: /^-[a-zA-Z]*c$/, stdin: true },
  { name: /^(?:node|nodejs|bun|deno)$/, code: /^(?:-[a-zA-Z]*[ep]|--eval|--print|eval)$/, stdin: true },
  { name: /^perl[0-9.]*$/, code: /^-[a-zA-Z]*[eE]$/, stdin: true },
  { name: /^ruby[0-9.]*$/, code: /^-[a-zA-Z]*e$/, stdin: true },
  { name: /^php[0-9.]*$/, code: /^-[a-zA-Z]*r$/, stdin: true },
  { name: /^(?:lua[0-9.]*|luajit|Rscript|osascript|tclsh|wish|expect)$/, code: /^-e$/, stdin: true },
  { name: /^(?:pwsh|powershell)(?:\.exe)?$/i, code: /^-(?:c|command|e|encodedcommand|ec)$/i, stdin: true },
];

/** Reads every step of a bash template; throws INVALID_MANUAL when an argument reaches a code context. */
export function checkBashContexts(commands: readonly string[]): ContextReport {
  const state = new AnalysisState();
  commands.forEach((command, step) => {
    state.step = step;
    new BashReader(command, state).readAll();
    // The next steps see this step's output as CMD_<i>_OUTPUT: it may hold any value this step used.
    state.assign(`CMD_${step}_OUTPUT`, new Set(state.stepRefs));
    state.stepRefs.clear();
  });
  return state.resolve();
}

class AnalysisState {
  step = 0;
  readonly integer: Event[] = [];
  readonly code: Event[] = [];
  readonly assigns = new Map<string, Set<Ref>>();
  readonly stepRefs = new Set<Ref>();
  readonly placeholders = new Set<string>();

  note(refs: Set<Ref>): void {
    for (const r of refs) {
      this.stepRefs.add(r);
      if (r.startsWith('ph:')) this.placeholders.add(r.slice(3));
    }
  }

  integerContext(refs: Set<Ref>, construct: string): void {
    if (refs.size > 0) this.integer.push({ refs, construct, step: this.step });
  }

  codeContext(refs: Set<Ref>, construct: string): void {
    if (refs.size > 0) this.code.push({ refs, construct, step: this.step });
  }

  assign(name: string, sources: Set<Ref>): void {
    let set = this.assigns.get(name);
    if (!set) this.assigns.set(name, (set = new Set()));
    for (const s of sources) set.add(s);
  }

  /** Placeholders reaching `ref` through assignments (positional parameters and `read` targets: all of them). */
  #taint(ref: Ref, seen = new Set<Ref>()): Set<string> {
    const out = new Set<string>();
    if (seen.has(ref)) return out;
    seen.add(ref);
    if (ref.startsWith('ph:')) {
      out.add(ref.slice(3));
      return out;
    }
    if (ref === 'var:@' || ref === 'all') {
      for (const p of this.placeholders) out.add(p);
      return out;
    }
    for (const source of this.assigns.get(ref.slice(4)) ?? []) for (const p of this.#taint(source, seen)) out.add(p);
    return out;
  }

  resolve(): ContextReport {
    for (const event of this.code) {
      for (const ref of event.refs) {
        const reached = [...this.#taint(ref)];
        if (reached.length === 0) continue;
        const via = ref.startsWith('var:') ? ` (through $${ref.slice(4)})` : '';
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: commands[${event.step}]: the value of argument "${reached[0]}" would be run as code by ${event.construct}${via}; ` +
            'pass values only as plain arguments, strings or here-document text',
        );
      }
    }
    const integers = new Map<string, string>();
    for (const event of this.integer) {
      for (const ref of event.refs) {
        for (const p of this.#taint(ref)) {
          if (!integers.has(p))
            integers.set(p, ref.startsWith('var:') ? `${event.construct} (through $${ref.slice(4)})` : event.construct);
        }
      }
    }
    return { integers };
  }
}

/** Placeholders (which are substituted even inside single quotes) and `$var` references the shell expands in raw text. */
function refsIn(raw: string): Set<Ref> {
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
function arithmeticRefs(raw: string): Set<Ref> {
  const refs = refsIn(raw);
  for (const m of raw.replace(PLACEHOLDERS, ' ').matchAll(IDENT)) refs.add(`var:${m[0]}`);
  return refs;
}

/** The literal text of a word with quotes removed (for recognising command names and flags). */
function unquote(raw: string): string {
  return raw.replace(/\\(.)/g, '$1').replace(/['"]/g, '');
}

interface Word {
  raw: string;
}

interface Command {
  words: Word[];
  /** Text the command reads on stdin from here-documents and here-strings. */
  stdin: string[];
}

/**
 * A reader of bash syntax good enough to find contexts: words and their quoting, simple commands,
 * pipelines, redirections, here-documents, `$( )`, backticks, `${ }`, `$(( ))`, `(( ))`, `[[ ]]`, `for`.
 */
class BashReader {
  #i = 0;
  readonly #text: string;
  readonly #state: AnalysisState;
  #pendingHereDocs: Array<{ delimiter: string; stripTabs: boolean; command: Command }> = [];
  /** References flowing down the current pipeline (what earlier stages may print). */
  #pipeline = new Set<Ref>();

  constructor(text: string, state: AnalysisState) {
    this.#text = text;
    this.#state = state;
  }

  readAll(): void {
    this.#readList(undefined);
  }

  /** Reads commands until `close` (a `)` or end of text). */
  #readList(close: ')' | undefined): void {
    const t = this.#text;
    let command: Command = { words: [], stdin: [] };
    const finish = (pipe: boolean) => {
      this.#finishCommand(command, pipe);
      command = { words: [], stdin: [] };
    };
    while (this.#i < t.length) {
      const c = t[this.#i];
      if (c === ' ' || c === '\t') {
        this.#i++;
        continue;
      }
      if (c === '\\' && t[this.#i + 1] === '\n') {
        this.#i += 2;
        continue;
      }
      if (c === '\n') {
        finish(false);
        this.#i++;
        this.#readHereDocBodies();
        continue;
      }
      if (c === '#') {
        const end = t.indexOf('\n', this.#i);
        this.#i = end === -1 ? t.length : end;
        continue;
      }
      if (c === ')') {
        if (close === ')') {
          this.#i++;
          finish(false);
          return;
        }
        this.#i++;
        finish(false);
        continue;
      }
      if (c === ';' || c === '&') {
        finish(false);
        this.#i += t.startsWith(';;', this.#i) || t.startsWith('&&', this.#i) ? 2 : 1;
        continue;
      }
      if (c === '|') {
        const or = t[this.#i + 1] === '|';
        finish(!or);
        this.#i += or || t[this.#i + 1] === '&' ? 2 : 1;
        continue;
      }
      if (c === '(' && command.words.length === 0) {
        if (t[this.#i + 1] === '(') {
          this.#arithmetic(this.#i + 2, '))', '(( ))');
          continue;
        }
        this.#i++;
        this.#readList(')');
        continue;
      }
      if (c === '(' && command.words.length === 1 && /^\s*\)/.test(t.slice(this.#i + 1))) {
        // `name() { … }`: a function definition.
        this.#i = t.indexOf(')', this.#i) + 1;
        command = { words: [], stdin: [] };
        continue;
      }
      if (c === '<' || c === '>' || (c === '&' && t[this.#i + 1] === '>')) {
        this.#redirection(command);
        continue;
      }
      if (c === '(') {
        // `for ((`, or `(` after words (a syntax this reader does not model): read it as a nested list.
        if (t[this.#i + 1] === '(' && command.words.length === 1 && unquote(command.words[0].raw) === 'for') {
          this.#arithmetic(this.#i + 2, '))', 'for (( ))');
          command = { words: [], stdin: [] };
          continue;
        }
        this.#i++;
        this.#readList(')');
        continue;
      }
      const word = this.#readWord();
      if (command.words.length === 0 && RESERVED.has(word.raw)) continue;
      if (command.words.length === 0 && word.raw === '[[') {
        this.#conditional();
        continue;
      }
      command.words.push(word);
    }
    finish(false);
  }

  /** One word from the current position; nested substitutions in it are read (and their contexts noted) on the way. */
  #readWord(): Word {
    const t = this.#text;
    const start = this.#i;
    while (this.#i < t.length && !BREAKS.includes(t[this.#i])) {
      const c = t[this.#i];
      if (c === '\\') {
        this.#i += 2;
      } else if (c === "'") {
        const end = t.indexOf("'", this.#i + 1);
        this.#i = end === -1 ? t.length : end + 1;
      } else if (c === '"') {
        this.#i++;
        this.#readDoubleQuoted();
      } else if (c === '$' && t[this.#i + 1] === "'") {
        this.#i += 2;
        while (this.#i < t.length && t[this.#i] !== "'") this.#i += t[this.#i] === '\\' ? 2 : 1;
        this.#i++;
      } else if (c === '$' || c === '`') {
        this.#dollar();
      } else if (c === '=' && t[this.#i + 1] === '(' && ASSIGNMENT.test(t.slice(start, this.#i + 1))) {
        // An array literal `name=( … )`: its elements are words.
        const open = this.#i + 1;
        const close = matching(t, open, '(', ')');
        this.#i = close + 1;
        const elements = t.slice(open + 1, close);
        for (const m of elements.matchAll(/\[([^\]]*)\]=/g))
          this.#state.integerContext(arithmeticRefs(m[1]), 'an array subscript');
      } else {
        this.#i++;
      }
    }
    // A word may also carry a `(`-less array subscript that is an assignment target: handled in #finishCommand.
    return { raw: t.slice(start, this.#i) };
  }

  #readDoubleQuoted(): void {
    const t = this.#text;
    while (this.#i < t.length && t[this.#i] !== '"') {
      const c = t[this.#i];
      if (c === '\\') this.#i += 2;
      else if (c === '$' || c === '`') this.#dollar();
      else this.#i++;
    }
    this.#i++;
  }

  /** At `$` or a backtick: command substitution, arithmetic, parameter expansion or a plain `$name`. */
  #dollar(): void {
    const t = this.#text;
    const i = this.#i;
    if (t[i] === '`') {
      let j = i + 1;
      while (j < t.length && t[j] !== '`') j += t[j] === '\\' ? 2 : 1;
      const inner = t.slice(i + 1, j).replace(/\\([`$\\])/g, '$1');
      new BashReader(inner, this.#state).readAll();
      this.#i = j + 1;
      return;
    }
    if (t.startsWith('$((', i)) {
      this.#arithmetic(i + 3, '))', '$(( ))');
      return;
    }
    if (t.startsWith('$[', i)) {
      this.#arithmetic(i + 2, ']', '$[ ]');
      return;
    }
    if (t.startsWith('$(', i)) {
      this.#i = i + 2;
      this.#readList(')');
      return;
    }
    if (t.startsWith('${', i)) {
      const close = matching(t, i + 1, '{', '}');
      this.#parameter(t.slice(i + 2, close));
      this.#i = close + 1;
      return;
    }
    this.#i = i + 1;
  }

  /** Arithmetic text from `start` to the matching `close`: every name and value in it is evaluated. */
  #arithmetic(start: number, close: '))' | ']', construct: string): void {
    const t = this.#text;
    let depth = 0;
    let j = start;
    for (; j < t.length; j++) {
      const c = t[j];
      if (c === '(' || (close === ']' && c === '[')) depth++;
      else if (depth > 0 && (c === ')' || (close === ']' && c === ']'))) depth--;
      else if (t.startsWith(close, j)) break;
    }
    const body = t.slice(start, j);
    this.#state.note(refsIn(body));
    this.#state.integerContext(arithmeticRefs(body), construct);
    this.#i = Math.min(t.length, j + close.length);
  }

  /** The inside of `${ … }`. */
  #parameter(body: string): void {
    const state = this.#state;
    state.note(refsIn(body));
    const m = /^([!#]?)([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])?/.exec(body)!;
    const name = m[2] ?? '';
    let rest = body.slice(m[0].length);
    if (new RegExp(PLACEHOLDERS.source).test(m[0]) || (name === '' && new RegExp(PLACEHOLDERS.source).test(body))) {
      throw new UtcpError('INVALID_MANUAL', `cli: a placeholder cannot name a parameter in \${${body}}`);
    }
    const nameRef = new Set<Ref>([/^[0-9@*]/.test(name) ? 'var:@' : `var:${name}`]);
    if (m[1] === '!' && name !== '' && !/^[@*]/.test(rest)) state.integerContext(nameRef, '${!name} indirection');
    if (rest.startsWith('[')) {
      const close = matching(rest, 0, '[', ']');
      const subscript = rest.slice(1, close);
      if (subscript !== '@' && subscript !== '*') state.integerContext(arithmeticRefs(subscript), 'an array subscript');
      rest = rest.slice(close + 1);
    }
    if (/^@[PE]/.test(rest) && rest[1] === 'P') state.codeContext(nameRef, '${name@P} prompt expansion');
    if (rest.startsWith(':') && !/^:[-=?+]/.test(rest)) {
      state.integerContext(arithmeticRefs(rest.slice(1)), '${name:offset:length}');
      return;
    }
    // Operator words (`:-default`, `/pattern/replacement`, ...) may hold nested expansions.
    const word = rest.replace(/^(?::?[-=?+]|\/\/?|##?|%%?|\^\^?|,,?|@.)/, '');
    if (word) {
      const reader = new BashReader(word, state);
      while (reader.#i < word.length) {
        reader.#readWord();
        reader.#i++;
      }
    }
  }

  /** `[[ … ]]`: operands of arithmetic comparisons are evaluated; `-v` takes a name. */
  #conditional(): void {
    const words: string[] = [];
    const t = this.#text;
    for (;;) {
      while (this.#i < t.length && ' \t\n'.includes(t[this.#i])) this.#i++;
      if (this.#i >= t.length) break;
      if (t.startsWith(']]', this.#i)) {
        this.#i += 2;
        break;
      }
      if ('()!'.includes(t[this.#i]) || t.startsWith('&&', this.#i) || t.startsWith('||', this.#i)) {
        words.push(t[this.#i]);
        this.#i += t[this.#i] === '&' || t[this.#i] === '|' ? 2 : 1;
        continue;
      }
      if (t[this.#i] === '<' || t[this.#i] === '>') {
        words.push(t[this.#i++]);
        continue;
      }
      words.push(this.#readWord().raw);
    }
    for (const w of words) this.#state.note(refsIn(w));
    words.forEach((w, k) => {
      if (/^-(?:eq|ne|lt|le|gt|ge)$/.test(w)) {
        this.#state.integerContext(arithmeticRefs(words[k - 1] ?? ''), `[[ ${w} ]]`);
        this.#state.integerContext(arithmeticRefs(words[k + 1] ?? ''), `[[ ${w} ]]`);
      }
      if (w === '-v' || w === '-R') this.#state.integerContext(refsIn(words[k + 1] ?? ''), `[[ ${w} ]]`);
    });
  }

  #redirection(command: Command): void {
    const t = this.#text;
    // A fd number just before the operator was read as a word: drop it.
    const last = command.words[command.words.length - 1];
    if (last && /^[0-9]+$/.test(last.raw) && t[this.#i - 1] !== ' ') command.words.pop();
    const op = /^(?:<<<|<<-|<<|<>|<&|>&|>>|>\||&>>|&>|<|>)/.exec(t.slice(this.#i))![0];
    this.#i += op.length;
    while (t[this.#i] === ' ' || t[this.#i] === '\t') this.#i++;
    if (op === '<<' || op === '<<-') {
      const start = this.#i;
      this.#readWord();
      this.#pendingHereDocs.push({ delimiter: unquote(t.slice(start, this.#i)), stripTabs: op === '<<-', command });
      return;
    }
    const target = this.#readWord().raw;
    this.#state.note(refsIn(target));
    if (op === '<<<') command.stdin.push(target);
  }

  #readHereDocBodies(): void {
    const t = this.#text;
    for (const doc of this.#pendingHereDocs.splice(0)) {
      const start = this.#i;
      let end = t.length;
      while (this.#i < t.length) {
        const nl = t.indexOf('\n', this.#i);
        const lineEnd = nl === -1 ? t.length : nl;
        const line = t.slice(this.#i, lineEnd);
        const next = nl === -1 ? t.length : nl + 1;
        if ((doc.stripTabs ? line.replace(/^\t+/, '') : line) === doc.delimiter) {
          end = this.#i;
          this.#i = next;
          break;
        }
        this.#i = next;
      }
      const body = t.slice(start, Math.min(end, this.#i));
      this.#state.note(refsIn(body));
      doc.command.stdin.push(body);
      // The command was finished at the newline: re-check what its stdin feeds.
      this.#checkStdinCode(doc.command, new Set(refsIn(body)));
    }
  }

  #finishCommand(command: Command, pipe: boolean): void {
    const refs = new Set<Ref>();
    for (const w of command.words) for (const r of refsIn(w.raw)) refs.add(r);
    for (const s of command.stdin) for (const r of refsIn(s)) refs.add(r);
    this.#state.note(refs);
    const stdinRefs = new Set<Ref>(this.#pipeline);
    for (const s of command.stdin) for (const r of refsIn(s)) stdinRefs.add(r);
    if (command.words.length > 0)
      this.#analyzeArgv(
        command.words.map((w) => w.raw),
        command,
        stdinRefs,
      );
    if (pipe) for (const r of refs) this.#pipeline.add(r);
    else this.#pipeline = new Set();
  }

  #checkStdinCode(command: Command, stdinRefs: Set<Ref>): void {
    if (command.words.length > 0)
      this.#analyzeArgv(
        command.words.map((w) => w.raw),
        command,
        stdinRefs,
        true,
      );
  }

  /** One command's words: assignments, the command name (past wrappers), and what it does with its arguments. */
  #analyzeArgv(argv: string[], command: Command, stdinRefs: Set<Ref>, stdinOnly = false): void {
    const state = this.#state;
    let k = 0;
    // Leading assignments.
    for (; k < argv.length; k++) {
      const m = ASSIGNMENT.exec(argv[k]);
      // `UTCP_ARG_x_UTCP_END=1` is no assignment once rewritten: it is the command word.
      if (!m || new RegExp(PLACEHOLDERS.source).test(m[1])) break;
      if (stdinOnly) continue;
      this.#assignment(m[1], m[2], argv[k].slice(m[0].length), '');
    }
    // Wrappers: the real command is further on.
    while (k < argv.length) {
      const name = basename(unquote(argv[k]));
      if (!WRAPPERS.has(name)) break;
      k++;
      while (
        k < argv.length &&
        (unquote(argv[k]).startsWith('-') ||
          ASSIGNMENT.test(argv[k]) ||
          (name === 'timeout' && /^[0-9.]+[smhd]?$/.test(unquote(argv[k]))))
      ) {
        const m = ASSIGNMENT.exec(argv[k]);
        if (m && name === 'env' && !stdinOnly) this.#assignment(m[1], m[2], argv[k].slice(m[0].length), '');
        k++;
      }
    }
    if (k >= argv.length) return;
    const words = argv.slice(k);
    const name = basename(unquote(words[0]));
    const args = words.slice(1);
    const allArgs = new Set<Ref>();
    for (const a of args) for (const r of refsIn(a)) allArgs.add(r);
    if (!stdinOnly) state.codeContext(refsIn(words[0]), 'the command name');

    const interpreter = INTERPRETERS.find((p) => p.name.test(name));
    if (interpreter) {
      const codeFlag = args.findIndex((a) => interpreter.code.test(unquote(a)));
      if (codeFlag >= 0) {
        if (!stdinOnly) state.codeContext(refsIn(args[codeFlag + 1] ?? ''), `${name} ${unquote(args[codeFlag])}`);
        return;
      }
      const scriptArg = args.find((a) => !unquote(a).startsWith('-') || unquote(a) === '-');
      if (scriptArg === undefined || unquote(scriptArg) === '-' || /^-[a-zA-Z]*s$/.test(unquote(args[0] ?? ''))) {
        state.codeContext(stdinRefs, `${name} reading its program from stdin`);
      }
      return;
    }
    if (stdinOnly) return;
    if (name === 'awk' || name === 'gawk' || name === 'mawk' || name === 'nawk' || name === 'busybox awk') {
      if (args.some((a) => /^-f|^--file/.test(unquote(a)))) return;
      const program = args.find((a, j) => !unquote(a).startsWith('-') && !/^-[vF]$/.test(unquote(args[j - 1] ?? '')));
      if (program !== undefined) state.codeContext(refsIn(program), `${name}'s program`);
      return;
    }
    if (name === 'sed' || name === 'gsed') {
      const scripts = args.flatMap((a, j) => (/^(?:-e|--expression)$/.test(unquote(args[j - 1] ?? '')) ? [a] : []));
      if (scripts.length === 0 && !args.some((a) => /^-f|^--file/.test(unquote(a)))) {
        const first = args.find((a) => !unquote(a).startsWith('-'));
        if (first !== undefined) scripts.push(first);
      }
      for (const s of scripts) state.codeContext(refsIn(s), "sed's script");
      return;
    }
    if (name === 'find') {
      const exec = args.findIndex((a) => /^-(?:exec|execdir|ok|okdir)$/.test(unquote(a)));
      if (exec >= 0) {
        const end = args.findIndex((a, j) => j > exec && /^(?:;|\\;|\+)$/.test(a.replace(/['"]/g, '')));
        this.#analyzeArgv(args.slice(exec + 1, end === -1 ? undefined : end), command, new Set());
      }
      return;
    }
    switch (name) {
      case 'eval':
      case 'source':
      case '.':
      case 'trap':
      case 'alias':
      case 'fc':
        state.codeContext(allArgs, name);
        return;
      case 'let':
        for (const a of args) state.integerContext(arithmeticRefs(unquote(a)), 'let');
        return;
      case 'declare':
      case 'typeset':
      case 'local':
      case 'readonly':
      case 'export': {
        const flags = args.filter((a) => /^[-+][a-zA-Z]+$/.test(unquote(a))).join('');
        for (const a of args) {
          if (/^[-+][a-zA-Z]+$/.test(unquote(a))) continue;
          const eq = a.indexOf('=');
          const target = eq === -1 ? a : a.slice(0, eq);
          const m = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?\+?$/.exec(target);
          if (!m || new RegExp(PLACEHOLDERS.source).test(m[1])) {
            state.integerContext(refsIn(target), `${name} NAME`);
            continue;
          }
          if (eq !== -1)
            this.#assignment(
              m[1],
              m[2],
              a.slice(eq + 1),
              flags.includes('i') ? `${name} -i` : flags.includes('n') ? `${name} -n` : '',
            );
        }
        return;
      }
      case 'printf': {
        const v = args.findIndex((a) => unquote(a) === '-v');
        if (v >= 0) {
          state.integerContext(refsIn(args[v + 1] ?? ''), 'printf -v NAME');
          const target = unquote(args[v + 1] ?? '');
          if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(target)) state.assign(target, allArgs);
        }
        return;
      }
      case 'read':
      case 'mapfile':
      case 'readarray': {
        for (let j = 0; j < args.length; j++) {
          const a = unquote(args[j]);
          if (a === '-C') state.codeContext(refsIn(args[j + 1] ?? ''), `${name} -C`);
          if (/^-[adinNptuCcOs]$/.test(a)) {
            j++;
            continue;
          }
          if (a.startsWith('-')) continue;
          state.integerContext(refsIn(args[j]), `${name} NAME`);
          if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(a)) state.assign(a, new Set(['all']));
        }
        if (name === 'read') {
          const arrayTarget = args.findIndex((a) => unquote(a) === '-a');
          if (arrayTarget >= 0) state.assign(unquote(args[arrayTarget + 1] ?? ''), new Set(['all']));
        }
        return;
      }
      case 'test':
      case '[': {
        args.forEach((a, j) => {
          if (unquote(a) === '-v' || unquote(a) === '-R')
            state.integerContext(refsIn(args[j + 1] ?? ''), `${name} -v NAME`);
        });
        return;
      }
      case 'for': {
        const variable = unquote(args[0] ?? '');
        if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable)) {
          const values = args[1] === 'in' ? args.slice(2) : [];
          const sources = new Set<Ref>(args[1] === 'in' ? [] : ['var:@']);
          for (const v of values) for (const r of refsIn(v)) sources.add(r);
          state.assign(variable, sources);
        }
        return;
      }
      case 'set':
        // `set -- values`: positional parameters; they are conservatively tied to every argument already.
        return;
    }
  }

  #assignment(name: string, subscript: string | undefined, value: string, integerConstruct: string): void {
    const state = this.#state;
    if (subscript) state.integerContext(arithmeticRefs(subscript.slice(1, -1)), 'an array subscript');
    const sources = refsIn(value);
    if (value.startsWith('('))
      for (const m of value.matchAll(/\[([^\]]*)\]=/g))
        state.integerContext(arithmeticRefs(m[1]), 'an array subscript');
    state.assign(name, sources);
    if (integerConstruct)
      state.integerContext(integerConstruct.endsWith('-i') ? arithmeticRefs(value) : sources, integerConstruct);
    if (DANGEROUS_VARIABLES.has(name)) state.codeContext(sources, `an assignment to ${name}`);
  }
}

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash === -1 ? word : word.slice(slash + 1);
}

/** Index of the bracket closing the one at `open` (quotes skipped), or the end of `text`. */
function matching(text: string, open: number, opener: string, closer: string): number {
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

// ------------------------------------------------------------------------------------ PowerShell

/** PowerShell constructs that run text as code, and the call operator on a value. */
const PS_CODE =
  /\b(?:Invoke-Expression|iex|Invoke-Command|icm|Start-Process|saps|Add-Type|New-Module|nmo|Invoke-Item|Set-Alias|New-Alias)\b|\[(?:System\.Management\.Automation\.)?ScriptBlock\]::Create|\.(?:ExpandString|InvokeScript|NewScriptBlock)\b|\$ExecutionContext|(?:^|[\s&(;|])(?:pwsh|powershell|cmd|bash|sh|wsl|start)(?:\.exe)?(?=\s|$)/i;

/** Reads a PowerShell template; throws INVALID_MANUAL when a placeholder shares a statement with a code-running construct. */
export function checkPowerShellContexts(commands: readonly string[]): ContextReport {
  commands.forEach((command, step) => {
    for (const statement of command.split(/[;\n|]/)) {
      const m = new RegExp(PLACEHOLDERS.source).exec(statement);
      if (!m) continue;
      const code = PS_CODE.exec(statement.replace(PLACEHOLDERS, ' '));
      if (code) {
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: commands[${step}]: the value of argument "${m[1]}" would be run as code by ${code[0]}; pass values only as plain arguments`,
        );
      }
      if (/^\s*[&.]\s*UTCP_ARG_/.test(statement) || /^\s*UTCP_ARG_/.test(statement)) {
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: commands[${step}]: the value of argument "${m[1]}" would choose the command to run`,
        );
      }
    }
  });
  return { integers: new Map() };
}
