/**
 * The model's regular expressions (grep's built-in search, bash_output's wait_for) and globs (the glob tool, grep's
 * glob filter) run on the package's linear-time engine; a pattern it cannot run is a typed argument error naming
 * the problem (docs/design/security.md#untrusted-regex).
 */
import { UtcpArgumentsError } from '../index.js';
import { compileUntrustedRegex, type LinearRegex, errorMessage } from '../internal.js';

/** What wait_for reads of a process's output (the process manager's OutputBuffer). */
export interface ReadableOutput {
  readonly total: number;
  read(cursor: number, max: number): { text: string; dropped: number };
}

export async function untrustedPattern(
  tool: string,
  argument: string,
  pattern: string,
  ignoreCase = false,
): Promise<LinearRegex> {
  const result = await compileUntrustedRegex(pattern, { dialect: 're2', ignoreCase });
  if (result.ok) return result.regex;
  throw new UtcpArgumentsError(tool, [
    { path: argument, message: `${JSON.stringify(cut(pattern))} cannot be used: ${result.problem}` },
  ]);
}

function cut(pattern: string): string {
  return pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern;
}

/** How far back each wait_for check looks into output it has already checked, in bytes. */
const WAIT_OVERLAP_BYTES = 64 * 1024;

/**
 * wait_for's check, run on each chunk of output: the first check reads everything since `cursor`, later ones only
 * the new output and the last WAIT_OVERLAP_BYTES before it (with a little context for `^`, `\b` and lookbehind),
 * so the work stays linear in the output (docs/design/security.md#untrusted-regex).
 */
export function waitMatcher(output: ReadableOutput, cursor: number, re: LinearRegex): () => boolean {
  let checkedTo = -1;
  return () => {
    const windowStart = checkedTo < 0 ? cursor : Math.max(cursor, checkedTo - WAIT_OVERLAP_BYTES);
    checkedTo = output.total;
    const contextStart = Math.max(cursor, windowStart - 64);
    if (contextStart < windowStart) {
      const context = output.read(contextStart, windowStart - contextStart);
      if (context.dropped === 0) {
        const { text } = output.read(contextStart, Number.MAX_SAFE_INTEGER);
        return re.test(text, context.text.length);
      }
    }
    return re.test(output.read(windowStart, Number.MAX_SAFE_INTEGER).text);
  };
}

/**
 * picomatch's lookarounds that only keep `.` and `..` segments and empty names out: the walk never yields either,
 * so dropping them changes no result, and what remains is plain RE2 syntax.
 */
const NO_OP_LOOKAROUNDS = ['(?!(?:^|\\/)\\.{1,2}(?:\\/|$))', '(?!\\.{1,2}(?:\\/|$))', '(?=.)'];

/**
 * A glob from the model (grep's `glob`, the glob tool's `pattern`) as picomatch reads it (`dot: true`, matched
 * against the base name when it has no `/`), run on the linear-time engine: picomatch's own RegExp backtracks
 * polynomially (`*a*a*a*a*a*a*b` against a 60-character name took 0.8 s, one more `*a` multiplies that by the
 * name's length) (docs/design/security.md#untrusted-regex).
 */
export async function untrustedGlob(tool: string, argument: string, glob: string): Promise<(path: string) => boolean> {
  const picomatch = (await import('picomatch')).default;
  const basename = !glob.includes('/');
  const refuse = (problem: string) =>
    new UtcpArgumentsError(tool, [
      { path: argument, message: `${JSON.stringify(cut(glob))} cannot be used: ${problem}` },
    ]);
  let source: string;
  try {
    source = picomatch.makeRe(glob, { dot: true, basename }).source;
  } catch (error) {
    throw refuse(errorMessage(error));
  }
  for (const fragment of NO_OP_LOOKAROUNDS) source = source.split(fragment).join('');
  if (/\(\?[=!<]/.test(source)) throw refuse('negated extglobs such as !(…) are not supported');
  const result = await compileUntrustedRegex(source, { dialect: 're2' });
  if (!result.ok) throw refuse(result.problem);
  const re = result.regex;
  return (path) => {
    if (path === '') return false;
    if (path === glob) return true;
    if (!basename) return re.test(path);
    const parts = path.split('/');
    return re.test(parts.at(-1) === '' ? (parts.at(-2) ?? '') : (parts.at(-1) ?? ''));
  };
}
