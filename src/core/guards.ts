/**
 * The small checks every folder needs, in one place (docs/design/README.md#source-layout): whether a value is a
 * plain object, and the message of anything thrown. `src/internal.ts` exports them to the agent, tools, MCP bridge
 * and CLI; `test/source-layout.test.ts` keeps copies from coming back.
 */

/** A non-null object that is not an array (a JSON object, or a record read from untrusted input). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The message of anything thrown: an `Error`'s `message`, anything else as a string. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
