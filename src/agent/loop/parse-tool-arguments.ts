import type { JsonObject } from '../../index.js';
import { isPlainObject } from '../../core/guards.js';

/**
 * Parses the JSON text of a tool call's arguments. Empty text means no arguments; a JSON string holding
 * an object (double-encoded, as some local models send) is unwrapped. Returns a message for the model on failure.
 */
export function parseToolArguments(text: string): { args: JsonObject } | { error: string } {
  if (text.trim() === '') return { args: {} };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      error: `the arguments are not valid JSON (${(error as Error).message}). Send the arguments as one JSON object.`,
    };
  }
  if (typeof parsed === 'string') {
    try {
      const inner: unknown = JSON.parse(parsed);
      if (isPlainObject(inner)) return { args: inner as JsonObject };
    } catch {
      // a plain string: reported below
    }
  }
  if (!isPlainObject(parsed))
    return {
      error: `the arguments must be a JSON object, got ${Array.isArray(parsed) ? 'an array' : parsed === null ? 'null' : typeof parsed}.`,
    };
  return { args: parsed as JsonObject };
}
