/** Terminal output: colour only on a TTY (and never with NO_COLOR), aligned tables, one-line errors with a hint. */
import { isUtcpError } from '../index.js';
import { errorMessage } from '../internal.js';

export interface Out {
  color: boolean;
  json: boolean;
  print(text: string): void;
  info(text: string): void;
}

export function createOut(json: boolean): Out {
  const color = Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
  return {
    color,
    json,
    print: (text) => process.stdout.write(text + '\n'),
    info: (text) => process.stderr.write(text + '\n'),
  };
}

const paint = (code: string) => (out: Pick<Out, 'color'>, s: string) => (out.color ? `\x1b[${code}m${s}\x1b[0m` : s);
export const bold = paint('1');
export const dim = paint('2');
export const red = paint('31');
export const green = paint('32');
export const yellow = paint('33');
export const cyan = paint('36');

const ANSI = /\x1b\[[0-9;]*m/g;
const visible = (s: string) => s.replace(ANSI, '').length;

/** Renders rows as aligned columns; the last column is truncated to the terminal width on a TTY. */
export function table(rows: string[][], maxWidth = process.stdout.columns || 0): string {
  if (rows.length === 0) return '';
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, visible(cell))));
  return rows
    .map((row) => {
      let line = row
        .map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i] - visible(cell))))
        .join('  ');
      if (maxWidth > 20 && visible(line) > maxWidth && !ANSI.test(line)) line = line.slice(0, maxWidth - 1) + '…';
      return line;
    })
    .join('\n');
}

const HINTS: Record<string, string> = {
  MISSING_VARIABLE: 'set it in the environment, in .env, or in the config\'s "variables"',
  TOOL_NOT_FOUND: 'list tools with `utcp tools <source>` or search with `utcp search <query> <source>`',
  INVALID_ARGUMENTS: "pass arguments with --arg name=value (nested: --arg body.title=x) or --args '{...}'",
  URL_POLICY: 'use https://, or http:// to localhost/127.0.0.1 only',
  TIMEOUT: 'raise the deadline with --timeout <ms>',
  DEPENDENCY_MISSING: 'run the npm install command above, in the project where utcp-kit is installed',
  INVALID_CONFIG: 'fix the config file (see the path above)',
};

/** Error fields copied into the --json error object, with their names there. */
const ERROR_FIELDS: ReadonlyArray<[string, string]> = [
  ['status', 'status'],
  ['exitCode', 'tool_exit_code'],
  ['variableName', 'variable_name'],
  ['toolName', 'tool_name'],
  ['suggestions', 'suggestions'],
  ['issues', 'issues'],
  ['sources', 'sources'],
  // An HTTP error body as JSON (RFC 9457 problem details and the like): what a caller needs to fix the request.
  ['problem', 'problem'],
];

/** The `{"error": {...}}` object printed on stdout in --json mode: code, message, hint and the error's own fields. */
export function jsonError(error: unknown, exitCode?: number): Record<string, unknown> {
  const e = error as Record<string, unknown> & Error;
  const code = isUtcpError(error)
    ? error.code
    : typeof e?.code === 'string' && !String(e.code).startsWith('ERR_')
      ? e.code
      : (e?.name ?? 'ERROR');
  const body: Record<string, unknown> = { code, message: errorMessage(error) };
  const hint = typeof code === 'string' ? HINTS[code] : undefined;
  if (hint) body.hint = hint;
  // One spelling for the whole object (snake_case, like exit_code): the failed tool's own exit status is
  // tool_exit_code, so it is never confused with utcp's exit_code.
  for (const [key, name] of ERROR_FIELDS) {
    if (e && e[key] !== undefined && !(Array.isArray(e[key]) && (e[key] as unknown[]).length === 0))
      body[name] = e[key];
  }
  if (exitCode !== undefined) body.exit_code = exitCode;
  return body;
}

export function printJsonError(out: Out, error: unknown, exitCode?: number, extra: Record<string, unknown> = {}): void {
  out.print(JSON.stringify({ error: jsonError(error, exitCode), ...extra }, null, 2));
}

/** One readable line (plus a hint line) for an error; never a stack trace unless DEBUG is set. */
export function formatError(out: Pick<Out, 'color'>, error: unknown): string {
  const message = errorMessage(error);
  const code = isUtcpError(error) ? error.code : undefined;
  const hint = code ? HINTS[code] : undefined;
  const [first, ...more] = message.split('\n');
  let text = `${red(out, 'error')}${code ? dim(out, ` [${code}]`) : ''}: ${first}`;
  // Usage errors carry their usage line on the next line; other messages are one line by design.
  if (!code && more.length) text += `\n${more.join('\n')}`;
  if (hint) text += `\n${dim(out, `hint: ${hint}`)}`;
  if (process.env.DEBUG && error instanceof Error && error.stack) text += `\n${error.stack}`;
  return text;
}

/** A status line on stderr that rewrites itself on a TTY and stays silent otherwise. */
export function progress(label: string): { update(done: number, total: number): void; done(): void } {
  const tty = Boolean(process.stderr.isTTY);
  return {
    update(done, total) {
      if (tty) process.stderr.write(`\r${label} ${done}/${total}…`);
    },
    done() {
      if (tty) process.stderr.write('\r\x1b[2K');
    },
  };
}

/**
 * Feedback for a call that takes a while: after `delayMs`, a line on stderr that counts the seconds
 * (`… calling greet.slow (3 s)`), rewritten in place and erased when the call ends. Only on a terminal and never
 * in --json mode, so pipes and scripts see nothing. `UTCP_PROGRESS=1` forces it (tests), `=0` disables it.
 */
export function slowCallNotice(out: Pick<Out, 'json' | 'color'>, label: string, delayMs = 1000): { stop(): void } {
  const forced = process.env.UTCP_PROGRESS;
  const enabled = forced === undefined ? Boolean(process.stderr.isTTY) && !out.json : forced === '1';
  if (!enabled) return { stop() {} };
  const started = Date.now();
  let shown = false;
  const draw = () => {
    shown = true;
    const seconds = Math.round((Date.now() - started) / 1000);
    process.stderr.write(`\r${dim(out, `… calling ${label} (${seconds} s, Ctrl-C to cancel)`)}`);
  };
  let interval: NodeJS.Timeout | undefined;
  const timer = setTimeout(() => {
    draw();
    interval = setInterval(draw, 1000);
    interval.unref();
  }, delayMs);
  timer.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      if (interval) clearInterval(interval);
      if (shown) process.stderr.write(process.stderr.isTTY ? '\r\x1b[2K' : '\n');
    },
  };
}
