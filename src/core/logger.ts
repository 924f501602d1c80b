/**
 * Diagnostics. The library prints nothing: pass a `logger` to see what it does, or set `NODE_DEBUG=utcp-kit` to get
 * its messages on stderr through Node's `util.debuglog`.
 */
import { debuglog } from 'node:util';

/**
 * One log level. Both common shapes are accepted: console style `(message, ...data)` and pino style
 * `(fields, message)`. The library calls it pino style when it has structured fields (`warn({ errors }, 'Manual x
 * failed')`: pino keeps them as fields, console prints them), and with the message alone otherwise.
 */
export interface LogFn {
  (message: string, ...data: unknown[]): void;
  (fields: Record<string, unknown>, message?: string, ...data: unknown[]): void;
}

/** Diagnostics sink: `console`, a pino or bunyan logger, or any object with some of these levels. */
export interface Logger {
  debug?: LogFn;
  info?: LogFn;
  warn?: LogFn;
  error?: LogFn;
}

/** The default: drops everything. */
export const silentLogger: Logger = Object.freeze({});

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;

/** `NODE_DEBUG=utcp-kit` output, created once (debuglog reads NODE_DEBUG at first use). */
let nodeDebug: ReturnType<typeof debuglog> | undefined;

/**
 * The sink the library's own code calls: every level present; `(message, fields?)` or `(fields, message)` both
 * work. Forwards to `logger` (pino style when there are fields) and, when `NODE_DEBUG=utcp-kit` is set, to stderr.
 */
export function completeLogger(logger: Logger | undefined): Required<Logger> {
  const target = logger ?? silentLogger;
  nodeDebug ??= debuglog('utcp-kit');
  const debug = nodeDebug.enabled ? nodeDebug : undefined;
  const out = {} as Record<(typeof LEVELS)[number], LogFn>;
  for (const level of LEVELS) {
    const fn = target[level];
    const forward = typeof fn === 'function' ? fn.bind(target) : undefined;
    if (!forward && !debug) {
      out[level] = () => {};
      continue;
    }
    out[level] = ((a: unknown, b?: unknown, ...rest: unknown[]) => {
      const [message, fields] = typeof a === 'string' ? [a, b] : [typeof b === 'string' ? b : '', a];
      const hasFields = typeof fields === 'object' && fields !== null;
      if (forward) {
        if (hasFields) (forward as (f: object, m: string, ...r: unknown[]) => void)(fields, message, ...rest);
        else forward(message, ...rest);
      }
      debug?.('%s %s%s', level, message, hasFields ? ` ${JSON.stringify(fields)}` : '');
    }) as LogFn;
  }
  return out;
}
