/**
 * The bash syntax reader behind checkBashContexts (docs/design/threat-model.md#cli-evaluating-contexts):
 * walks one step of a template and reports to an AnalysisState where placeholders and variables land.
 * Split from shell-contexts.ts, which stays the entry point.
 */
import { UtcpError } from '../../core/errors.js';
import type { AnalysisState } from './analysis-state.js';
import {
  ASSIGNMENT,
  BREAKS,
  DANGEROUS_VARIABLES,
  INTERPRETERS,
  PLACEHOLDERS,
  RESERVED,
  type Ref,
  WRAPPERS,
  arithmeticRefs,
  basename,
  matching,
  refsIn,
  unquote,
} from './bash-syntax.js';

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
export class BashReader {
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
