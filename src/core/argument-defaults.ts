/**
 * Schema defaults for required arguments (docs/design/manual-format.md#required-defaults). Many MCP servers list a
 * property with a `default` as `required` (their schema generator marks every defaulted field so); the SDK clients
 * send calls without it and the server fills it in. So before validation a missing required property that declares a
 * `default` gets that default, on a copy of the arguments; nothing else is added and the caller's object is never
 * changed.
 */
import type { JsonObject } from './types.js';
import { isPlainObject as isObject } from './guards.js';

/** How deep nested objects are followed; schemas nest far less than this in practice. */
const MAX_DEPTH = 16;

/** Defines an own property (a key named `__proto__` stays a plain key). */
function setOwn(target: JsonObject, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** `args` with the defaults of missing required properties filled in; the same object when nothing is missing. */
export function fillRequiredDefaults(schema: unknown, args: JsonObject, depth = 0): JsonObject {
  if (!isObject(schema) || depth > MAX_DEPTH) return args;
  const properties = schema.properties;
  if (!isObject(properties)) return args;
  let out: JsonObject | undefined;
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) {
    if (typeof name !== 'string' || Object.hasOwn(args, name) || !Object.hasOwn(properties, name)) continue;
    const property = properties[name];
    if (!isObject(property) || property.default === undefined) continue;
    out ??= { ...args };
    setOwn(out, name, structuredClone(property.default));
  }
  // Objects the caller passed may have required-with-default properties of their own. The walk follows the
  // arguments, not the schema: a call runs this, and a schema may list far more properties than a call passes.
  for (const name of Object.keys(args)) {
    const value = args[name];
    if (!isObject(value) || !Object.hasOwn(properties, name)) continue;
    const filled = fillRequiredDefaults(properties[name], value as JsonObject, depth + 1);
    if (filled !== value) setOwn((out ??= { ...args }), name, filled);
  }
  return out ?? args;
}

/**
 * Bytes passed in-process (`Uint8Array`, `Buffer`) as base64 text, on a copy: arguments are JSON, and base64 is how
 * bytes travel in JSON (docs/design/transports.md#http-files). The same object when there are none.
 */
export function encodeBytes<T>(value: T, depth = 0): T {
  if (value instanceof Uint8Array)
    return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64') as T;
  if (typeof value !== 'object' || value === null || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = encodeBytes(value[i], depth + 1);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  let out: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(value)) {
    const e = encodeBytes(v, depth + 1);
    if (e !== v) setOwn((out ??= { ...(value as Record<string, unknown>) }) as JsonObject, k, e);
  }
  return (out ?? value) as T;
}
