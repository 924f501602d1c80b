import type { Enum, Field, IConversionOptions, Type } from 'protobufjs';
import type { ValidationIssue } from '../../core/errors.js';
import { WRAPPERS, isEnum, mapShape, typeName } from './proto-schema.js';

/** How decoded messages are turned into plain objects before the JSON mapping below. */
export const TO_OBJECT_OPTIONS: IConversionOptions = {
  longs: String,
  enums: String,
  bytes: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: true,
  json: true,
};

const INT32 = new Set(['int32', 'sint32', 'sfixed32']);
const UINT32 = new Set(['uint32', 'fixed32']);
const INT64 = new Set(['int64', 'sint64', 'sfixed64']);
const UINT64 = new Set(['uint64', 'fixed64']);
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const TIMESTAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;
const DURATION = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/;

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Converts JSON arguments into the plain object protobufjs `fromObject` expects, following the
 * protobuf JSON mapping (proto field names or lowerCamelCase; 64-bit ints as strings or numbers;
 * bytes as base64; enums by name or number; well-known types by their JSON form).
 * Problems (unknown fields, wrong types) are appended to `issues` with their path.
 */
export function jsonToMessage(
  type: Type,
  value: unknown,
  path: string,
  issues: ValidationIssue[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push({ path: path || '(arguments)', message: `must be an object (message ${typeName(type)})` });
    return out;
  }
  const byName = new Map<string, Field>();
  for (const field of type.fieldsArray) {
    byName.set(field.name, field);
    byName.set(camel(field.name), field);
  }
  for (const [key, v] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    const field = byName.get(key);
    if (!field) {
      issues.push({ path: at, message: `is not a field of message ${typeName(type)}` });
      continue;
    }
    if (v === null || v === undefined) continue;
    out[field.name] = fieldToProto(field, v, at, issues);
  }
  return out;
}

function fieldToProto(field: Field, value: unknown, path: string, issues: ValidationIssue[]): unknown {
  const map = mapShape(field);
  if (map) {
    if (typeof value !== 'object' || Array.isArray(value)) return issue(issues, path, 'must be an object (map)');
    const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => ({
      key: map.keyType === 'string' ? k : scalarToProto(map.keyType, k, `${path}.${k}`, issues, true),
      value: singleToProto(map.valueType, map.valueResolved, v, `${path}.${k}`, issues),
    }));
    if (map.entry) return entries;
    return Object.fromEntries(entries.map((e) => [String(e.key), e.value]));
  }
  if (field.repeated) {
    if (!Array.isArray(value)) return issue(issues, path, 'must be an array');
    return value.map((v, i) => singleToProto(field.type, field.resolvedType, v, `${path}[${i}]`, issues));
  }
  return singleToProto(field.type, field.resolvedType, value, path, issues);
}

function issue(issues: ValidationIssue[], path: string, message: string): undefined {
  issues.push({ path, message });
  return undefined;
}

function singleToProto(
  scalar: string,
  resolved: Type | Enum | null,
  value: unknown,
  path: string,
  issues: ValidationIssue[],
): unknown {
  if (resolved && isEnum(resolved)) {
    if (typeof value === 'string' && Object.prototype.hasOwnProperty.call(resolved.values, value)) return value;
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    return issue(issues, path, `must be one of ${JSON.stringify(Object.keys(resolved.values))}`);
  }
  if (resolved) return messageValueToProto(resolved as Type, value, path, issues);
  return scalarToProto(scalar, value, path, issues);
}

function scalarToProto(type: string, value: unknown, path: string, issues: ValidationIssue[], mapKey = false): unknown {
  const integerText = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? value.trim() : undefined;
  if (INT32.has(type) || UINT32.has(type)) {
    const n = typeof value === 'number' ? value : integerText !== undefined ? Number(integerText) : NaN;
    const [min, max] = UINT32.has(type) ? [0, 0xffffffff] : [-0x80000000, 0x7fffffff];
    if (!Number.isInteger(n) || n < min || n > max) return issue(issues, path, `must be a ${type} integer`);
    return n;
  }
  if (INT64.has(type) || UINT64.has(type)) {
    const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : integerText;
    if (text === undefined)
      return issue(issues, path, `must be a ${type} integer (a decimal string or a safe integer)`);
    const big = BigInt(text);
    const [min, max] = UINT64.has(type) ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
    if (big < min || big > max) return issue(issues, path, `is out of range for ${type}`);
    return text;
  }
  if (mapKey) {
    if (type === 'bool' && (value === 'true' || value === 'false')) return value === 'true';
    return value;
  }
  switch (type) {
    case 'double':
    case 'float':
      if (typeof value === 'number') return value;
      if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return Number(value);
      if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) return Number(value);
      return issue(issues, path, 'must be a number');
    case 'bool':
      return typeof value === 'boolean' ? value : issue(issues, path, 'must be a boolean');
    case 'string':
      return typeof value === 'string' ? value : issue(issues, path, 'must be a string');
    case 'bytes':
      if (typeof value !== 'string' || !BASE64.test(value)) return issue(issues, path, 'must be a base64 string');
      return Buffer.from(value, 'base64');
    default:
      return issue(issues, path, `has an unsupported type ${type}`);
  }
}

function messageValueToProto(type: Type, value: unknown, path: string, issues: ValidationIssue[]): unknown {
  const name = typeName(type);
  switch (name) {
    case 'google.protobuf.Timestamp': {
      const m = typeof value === 'string' ? TIMESTAMP.exec(value) : null;
      const ms = m ? Date.parse(`${m[1]}${m[3]}`) : NaN;
      if (!m || !Number.isFinite(ms))
        return issue(issues, path, 'must be an RFC 3339 timestamp, e.g. 2024-01-01T00:00:00Z');
      return { seconds: String(Math.floor(ms / 1000)), nanos: Number((m[2] ?? '').padEnd(9, '0')) };
    }
    case 'google.protobuf.Duration': {
      const m = typeof value === 'string' ? DURATION.exec(value) : null;
      if (!m) return issue(issues, path, 'must be a duration such as "1.5s"');
      const sign = m[1] ? -1 : 1;
      return { seconds: `${m[1] ?? ''}${m[2]}`, nanos: sign * Number((m[3] ?? '').padEnd(9, '0')) };
    }
    case 'google.protobuf.Struct':
      if (typeof value !== 'object' || value === null || Array.isArray(value))
        return issue(issues, path, 'must be an object');
      return structToProto(value as Record<string, unknown>, structEntries(type));
    case 'google.protobuf.Value':
      return valueToProto(value, structEntries(type));
    case 'google.protobuf.ListValue':
      if (!Array.isArray(value)) return issue(issues, path, 'must be an array');
      return { values: value.map((v) => valueToProto(v, structEntries(type))) };
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.FieldMask':
      if (typeof value !== 'string') return issue(issues, path, 'must be a comma-separated string of field paths');
      return {
        paths: value
          .split(',')
          .filter(Boolean)
          .map((p) => p.split('.').map(snake).join('.')),
      };
    case 'google.protobuf.Any':
      if (
        typeof value !== 'object' ||
        value === null ||
        typeof (value as { '@type'?: unknown })['@type'] !== 'string'
      ) {
        return issue(issues, path, 'must be an object with "@type"');
      }
      return value;
    default:
      if (WRAPPERS[name]) return { value: scalarToProto(WRAPPERS[name], value, path, issues) };
  }
  return jsonToMessage(type, value, path, issues);
}

/** Whether this root's `Struct.fields` is a repeated entry message (descriptors) rather than a map (.proto text). */
function structEntries(anyWellKnown: Type): boolean {
  const struct = anyWellKnown.root.lookup('google.protobuf.Struct') as Type | null;
  const fields = struct?.fields.fields;
  return !!fields && !!mapShape(fields)?.entry;
}

function structToProto(value: Record<string, unknown>, entries: boolean): unknown {
  const pairs = Object.entries(value).map(([key, v]) => ({ key, value: valueToProto(v, entries) }));
  return { fields: entries ? pairs : Object.fromEntries(pairs.map((p) => [p.key, p.value])) };
}

function valueToProto(value: unknown, entries: boolean): unknown {
  if (value === null || value === undefined) return { nullValue: 'NULL_VALUE' };
  if (typeof value === 'number') return { numberValue: value };
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (Array.isArray(value)) return { listValue: { values: value.map((v) => valueToProto(v, entries)) } };
  return { structValue: structToProto(value as Record<string, unknown>, entries) };
}

// ------------------------------------------------------------------ decoding

/**
 * Turns a decoded message (from `toObject` with TO_OBJECT_OPTIONS) into its JSON form with proto
 * field names: well-known types become strings/objects/values, virtual oneof properties are dropped.
 */
export function messageToJson(type: Type, object: Record<string, unknown>): Record<string, unknown> {
  return messageFieldsToJson(type, object);
}

/**
 * A whole decoded response in proto3 JSON: the same mapping as for a field, so a response that is itself a
 * well-known type (a Timestamp, a wrapper, Struct) has that type's JSON form (docs/design/transports.md#grpc-json).
 */
export function responseToJson(type: Type, object: Record<string, unknown>): unknown {
  return singleToJson(type, object);
}

function messageFieldsToJson(type: Type, object: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of type.fieldsArray) {
    if (!(field.name in object)) continue;
    const v = object[field.name];
    out[field.name] = v === null || v === undefined ? null : fieldToJson(field, v);
  }
  return out;
}

function fieldToJson(field: Field, value: unknown): unknown {
  const map = mapShape(field);
  if (map) {
    const pairs: Array<[unknown, unknown]> = map.entry
      ? ((value as Array<{ key: unknown; value: unknown }>) ?? []).map((e) => [e.key, e.value])
      : Object.entries(value as Record<string, unknown>);
    return Object.fromEntries(pairs.map(([k, v]) => [String(k), singleToJson(map.valueResolved, v)]));
  }
  if (field.repeated && Array.isArray(value)) return value.map((v) => singleToJson(field.resolvedType, v));
  return singleToJson(field.resolvedType, value);
}

function singleToJson(resolved: Type | Enum | null, value: unknown): unknown {
  if (!resolved || isEnum(resolved) || value === null || typeof value !== 'object') return value;
  const type = resolved as Type;
  const v = value as Record<string, unknown>;
  const name = typeName(type);
  switch (name) {
    case 'google.protobuf.Timestamp':
      return timestampToJson(String(v.seconds ?? '0'), Number(v.nanos ?? 0));
    case 'google.protobuf.Duration':
      return durationToJson(String(v.seconds ?? '0'), Number(v.nanos ?? 0));
    case 'google.protobuf.Struct':
      return structToJson(v);
    case 'google.protobuf.Value':
      return valueToJson(v);
    case 'google.protobuf.ListValue':
      return ((v.values as unknown[]) ?? []).map((x) => valueToJson(x as Record<string, unknown>));
    case 'google.protobuf.Empty':
      return {};
    case 'google.protobuf.FieldMask':
      return ((v.paths as string[]) ?? []).map((p) => p.split('.').map(camel).join('.')).join(',');
    case 'google.protobuf.Any':
      return v;
    default:
      if (WRAPPERS[name]) return v.value ?? null;
  }
  return messageFieldsToJson(type, v);
}

function structToJson(v: Record<string, unknown>): Record<string, unknown> {
  const fields = v.fields ?? {};
  const pairs: Array<[unknown, unknown]> = Array.isArray(fields)
    ? (fields as Array<{ key: unknown; value: unknown }>).map((e) => [e.key, e.value])
    : Object.entries(fields as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, x] of pairs) out[String(k)] = valueToJson(x as Record<string, unknown>);
  return out;
}

function valueToJson(v: Record<string, unknown> | null | undefined): unknown {
  if (!v) return null;
  const kind = typeof v.kind === 'string' ? v.kind : undefined;
  switch (kind) {
    case 'numberValue':
    case 'stringValue':
    case 'boolValue':
      return v[kind];
    case 'structValue':
      return structToJson(v.structValue as Record<string, unknown>);
    case 'listValue':
      return (((v.listValue as Record<string, unknown>)?.values as unknown[]) ?? []).map((x) =>
        valueToJson(x as Record<string, unknown>),
      );
    default:
      return null;
  }
}

function timestampToJson(seconds: string, nanos: number): string {
  const date = new Date(Number(seconds) * 1000);
  const base = date.toISOString().slice(0, 19);
  if (!nanos) return `${base}Z`;
  let frac = String(nanos).padStart(9, '0');
  frac = frac.endsWith('000000') ? frac.slice(0, 3) : frac.endsWith('000') ? frac.slice(0, 6) : frac;
  return `${base}.${frac}Z`;
}

function durationToJson(seconds: string, nanos: number): string {
  if (!nanos) return `${seconds}s`;
  const negative = seconds.startsWith('-') || nanos < 0;
  const whole = seconds.replace(/^-/, '');
  let frac = String(Math.abs(nanos)).padStart(9, '0');
  frac = frac.endsWith('000000') ? frac.slice(0, 3) : frac.endsWith('000') ? frac.slice(0, 6) : frac;
  return `${negative ? '-' : ''}${whole}.${frac}s`;
}
