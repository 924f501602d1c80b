/** Exit codes and the two CLI-level errors that choose them (documented in `utcp --help` and the README). */

/** Exit codes: documented in `utcp --help`. */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, SOURCE: 3 } as const;

/** The command line was wrong: exit 2. */
export class UsageError extends Error {}

/** A source (file, URL, config, MCP server) could not be loaded: exit 3. */
export class SourceError extends Error {
  readonly code = 'SOURCE_FAILED';
  /** Each failed source with its errors. */
  readonly sources: Array<{ name: string; errors: string[] }>;
  constructor(message: string, sources: Array<{ name: string; errors: string[] }> = [], options?: ErrorOptions) {
    super(message, options);
    this.sources = sources;
  }
}
