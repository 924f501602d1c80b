/** Diagnostics sink. The library prints nothing; pass a logger to see what it does. */
export interface Logger {
  debug?(message: string, data?: Record<string, unknown>): void;
  info?(message: string, data?: Record<string, unknown>): void;
  warn?(message: string, data?: Record<string, unknown>): void;
  error?(message: string, data?: Record<string, unknown>): void;
}

/** The default: drops everything. */
export const silentLogger: Logger = Object.freeze({});

/** Fills missing levels so callers can invoke any level without checks. */
export function completeLogger(logger: Logger | undefined): Required<Logger> {
  const l = logger ?? silentLogger;
  const noop = () => {};
  return {
    debug: l.debug?.bind(l) ?? noop,
    info: l.info?.bind(l) ?? noop,
    warn: l.warn?.bind(l) ?? noop,
    error: l.error?.bind(l) ?? noop,
  };
}
