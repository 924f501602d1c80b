/**
 * Nesting bounds for the recursive walks over data a manual or server controls
 * (docs/design/threat-model.md#edges-and-nesting): a walk past its bound fails with a typed error, never with
 * `RangeError: Maximum call stack size exceeded`.
 */
import { UtcpValidationError } from './errors.js';

/**
 * How deep a call template or an `inputs` schema may nest, in levels of objects and arrays. Real ones stay under 20;
 * the recursive walks over them (variable substitution, message templates, schema copies, Ajv) fit far deeper ones.
 */
export const MAX_TEMPLATE_NESTING_DEPTH = 256;

/** The error of a template or schema nested past MAX_TEMPLATE_NESTING_DEPTH; `path` is where the walk was. */
export function nestedTooDeep(what: string, path: readonly string[]): UtcpValidationError {
  const shown = path.slice(0, 6).join('.') + (path.length > 6 ? '...' : '');
  return new UtcpValidationError(what, [
    { path: shown, message: `nested deeper than ${MAX_TEMPLATE_NESTING_DEPTH} levels (objects and arrays)` },
  ]);
}
