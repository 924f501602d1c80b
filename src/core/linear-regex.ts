/**
 * Regular expressions from untrusted sources (the model's `grep` and `wait_for` patterns, a manual's JSON Schema
 * `pattern` and `patternProperties`) run on a linear-time engine with RE2 semantics (re2js, pure JavaScript),
 * never on JavaScript's backtracking RegExp: `^(a+)+$` against `'a'.repeat(40) + '!'` pins the event loop for
 * minutes there. The engine is imported on the first compile, so importing the package or registering manuals
 * without `pattern` never loads it (docs/design/security.md#untrusted-regex).
 */
import { UtcpError } from './errors.js';
import { errorMessage } from './guards.js';

type Re2Module = typeof import('re2js');
type Re2Pattern = InstanceType<Re2Module['RE2JS']>;

/**
 * The largest compiled program accepted, in RE2 instructions. Matching costs at most about one nanosecond per
 * instruction per input character once the lazy DFA gives up (measured: `.{1000}x`, 1,003 instructions, 0.86 µs per
 * character of prose), so this bounds the worst case to about 2 µs per character. `^[a-z]{1,255}$` is 513
 * instructions, `^.{1,1000}$` 2,003.
 */
export const MAX_REGEX_PROGRAM = 2_000;
/** The longest pattern compiled, in characters (compiling is linear in the pattern, about 7 µs per character). */
export const MAX_REGEX_CHARS = 10_000;

/**
 * - `re2`: the model's patterns (grep, wait_for). RE2 syntax, as ripgrep's; JavaScript spellings such as `\u00e9`
 *   and `(?<name>…)` are accepted too. No lookaround, no backreferences.
 * - `ecmascript`: JSON Schema `pattern` (ECMA-262 with the `u` flag): translated to RE2 syntax; matching is on
 *   code points; captureless lookbehind is supported (linear), lookahead and backreferences are not.
 */
export type RegexDialect = 're2' | 'ecmascript';

export interface LinearRegexOptions {
  dialect: RegexDialect;
  ignoreCase?: boolean;
}

/** A compiled pattern. `test` looks for a match anywhere in `text`, starting at index `from` (default 0). */
export interface LinearRegex {
  readonly source: string;
  test(text: string, from?: number): boolean;
  /** Unique per pattern and options (Ajv keys its compiled patterns by this). */
  toString(): string;
}

export type LinearRegexResult = { ok: true; regex: LinearRegex } | { ok: false; problem: string };

let loading: Promise<Re2Module> | undefined;
let engine: Re2Module | undefined;

/** Imports the engine (once per process; it is stateless). */
export function loadLinearRegex(): Promise<void> {
  loading ??= import('re2js').then(
    (mod) => (engine = mod),
    (cause: unknown) => {
      loading = undefined;
      throw new UtcpError('DEPENDENCY_MISSING', 'Untrusted regular expressions need re2js: npm install re2js', {
        cause,
      });
    },
  );
  return loading.then(() => undefined);
}

/** Whether `compileLinearRegex` can run synchronously now. */
export function linearRegexLoaded(): boolean {
  return engine !== undefined;
}

/** True when `pattern` has a `\k<name>` backreference outside a character class (re2js would read it as `k<name>`). */
function hasNamedBackreference(pattern: string): boolean {
  for (let i = 0; i < pattern.length - 1; i++) {
    if (pattern[i] !== '\\') continue;
    if (pattern[i + 1] === 'k' && pattern[i + 2] === '<') return true;
    i++; // skip the escaped character
  }
  return false;
}

const SYNTAX_HINT: Record<RegexDialect, string> = {
  re2: 'RE2 syntax: lookahead, lookbehind, backreferences and repeat counts above 1000 are not supported',
  ecmascript:
    'the linear-time engine runs JSON Schema patterns without lookahead, backreferences, capturing groups inside lookbehind and repeat counts above 1000',
};

function describe(error: unknown): string {
  const message = errorMessage(error);
  return message.replace(/^error parsing regexp: /, '');
}

/**
 * Compiles `pattern` for the linear-time engine, which must be loaded (`loadLinearRegex`). Never throws for a bad
 * pattern: the result says what is wrong with it.
 */
export function compileLinearRegex(pattern: string, options: LinearRegexOptions): LinearRegexResult {
  const re2 = engine;
  if (!re2) throw new Error('the regular-expression engine is not loaded (call loadLinearRegex first)');
  if (pattern.length > MAX_REGEX_CHARS)
    return { ok: false, problem: `it is ${pattern.length} characters long; at most ${MAX_REGEX_CHARS} are accepted` };
  if (hasNamedBackreference(pattern))
    return { ok: false, problem: `backreferences (\\k<name>) are not supported (${SYNTAX_HINT[options.dialect]})` };
  const { RE2JS } = re2;
  let flags = options.ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
  let compiled: Re2Pattern | undefined;
  let firstError: unknown;
  if (options.dialect === 're2') {
    try {
      compiled = RE2JS.compile(pattern, flags);
    } catch (error) {
      firstError = error;
    }
  } else {
    flags |= RE2JS.LOOKBEHINDS;
  }
  if (!compiled) {
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(pattern), flags);
    } catch (error) {
      return { ok: false, problem: `${describe(firstError ?? error)} (${SYNTAX_HINT[options.dialect]})` };
    }
  }
  const size = compiled.programSize();
  if (size > MAX_REGEX_PROGRAM)
    return {
      ok: false,
      problem: `it compiles to ${size} instructions; at most ${MAX_REGEX_PROGRAM} are accepted (use smaller repeat counts)`,
    };
  const p = compiled;
  const key = `/${pattern}/${options.dialect}${options.ignoreCase ? 'i' : ''}`;
  // Only `^`, `\b`, `\B`, `\A` and lookbehind look left of where a search starts: without them a search from `from`
  // is a search of the rest of the text, which the DFA runs (the matcher's `find(from)` is about 5x slower).
  const looksLeft = /\^|\\[bBA]|\(\?<[=!]/.test(pattern);
  const from = (text: string, start: number) =>
    looksLeft ? p.matcher(text).find(Math.min(start, text.length)) : p.test(text.slice(start));
  return {
    ok: true,
    regex: {
      source: pattern,
      test: (text, start = 0) => (start === 0 ? p.test(text) : from(text, start)),
      toString: () => key,
    },
  };
}

/** Loads the engine when needed, then compiles (see `compileLinearRegex`). */
export async function compileUntrustedRegex(pattern: string, options: LinearRegexOptions): Promise<LinearRegexResult> {
  await loadLinearRegex();
  return compileLinearRegex(pattern, options);
}
