/** Terminal output: colour only on a TTY (and never with NO_COLOR), aligned tables, one-line errors with a hint. */
import { isUtcpError } from '../index.js';

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
      let line = row.map((cell, i) => (i === row.length - 1 ? cell : cell + ' '.repeat(widths[i] - visible(cell)))).join('  ');
      if (maxWidth > 20 && visible(line) > maxWidth && !ANSI.test(line)) line = line.slice(0, maxWidth - 1) + '…';
      return line;
    })
    .join('\n');
}

const HINTS: Record<string, string> = {
  MISSING_VARIABLE: 'set it in the environment, in .env, or in the config\'s "variables"',
  TOOL_NOT_FOUND: 'list tools with `utcp tools <source>` or search with `utcp search <query> <source>`',
  INVALID_ARGUMENTS: 'pass arguments with --arg name=value or --json \'{...}\'',
  URL_POLICY: 'use https://, or http:// to localhost/127.0.0.1 only',
  TIMEOUT: 'raise the deadline with --timeout <ms>',
  DEPENDENCY_MISSING: 'install the named package',
  INVALID_CONFIG: 'fix the config file (see the path above)',
};

/** One readable line (plus a hint line) for an error; never a stack trace unless DEBUG is set. */
export function formatError(out: Pick<Out, 'color'>, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = isUtcpError(error) ? error.code : undefined;
  const hint = code ? HINTS[code] : undefined;
  let text = `${red(out, 'error')}${code ? dim(out, ` [${code}]`) : ''}: ${message.split('\n')[0]}`;
  const excerpt = (error as { bodyExcerpt?: unknown }).bodyExcerpt;
  if (typeof excerpt === 'string' && excerpt.trim()) text += `\n${dim(out, `response: ${excerpt.trim().replace(/\s+/g, ' ').slice(0, 300)}`)}`;
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
