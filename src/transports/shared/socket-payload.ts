/**
 * Outgoing payloads of the socket transports (websocket, tcp, udp; docs/design/transports.md#socket-payload):
 * `UTCP_ARG_<name>_UTCP_ARG` substitution, the `tool_args` wrapper, the wire tool name,
 * the discovery message, and decoding of raw response bytes.
 */
import { TextDecoder } from 'node:util';
import { UtcpError } from '../../core/errors.js';
import { MAX_TEMPLATE_NESTING_DEPTH, nestedTooDeep } from '../../core/nesting.js';
import { argToText, parseJsonOrText } from '../../core/stringify.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { SocketRequestOptions } from './template-fields.js';

/** The default discovery message of websocket, tcp and udp manuals. */
export const DEFAULT_DISCOVERY_MESSAGE = Object.freeze({ type: 'utcp' });

/** `UTCP_ARG_<name>_UTCP_ARG`, the placeholder of argument `name`. */
export function socketPlaceholder(name: string): string {
  return `UTCP_ARG_${name}_UTCP_ARG`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function presentNames(args: JsonObject): string[] {
  return Object.keys(args).filter((k) => args[k] !== undefined);
}

/** One regular expression matching the placeholder of every present argument (single pass: values are never re-scanned). */
function placeholderPattern(args: JsonObject): RegExp | undefined {
  const names = presentNames(args);
  if (names.length === 0) return undefined;
  const alternatives = names
    .sort((a, b) => b.length - a.length)
    .map(escapeRegExp)
    .join('|');
  return new RegExp(`UTCP_ARG_(${alternatives})_UTCP_ARG`, 'g');
}

/** How a value is written into a text template. */
export type PlaceholderMode =
  /** Strings as-is, everything else as JSON text. */
  | 'raw'
  /** Strings JSON-escaped without the quotes, everything else as JSON text (for JSON-looking templates). */
  | 'json-escaped';

function valueText(value: unknown, mode: PlaceholderMode): string {
  if (typeof value === 'string') return mode === 'raw' ? value : JSON.stringify(value).slice(1, -1);
  return JSON.stringify(value) ?? 'null';
}

/**
 * Replaces each `UTCP_ARG_<name>_UTCP_ARG` whose argument is present; unknown placeholders stay unchanged.
 * Substituted values are never scanned again, so a value cannot inject another placeholder.
 */
export function substitutePlaceholders(template: string, args: JsonObject, mode: PlaceholderMode = 'raw'): string {
  const pattern = placeholderPattern(args);
  if (!pattern) return template;
  return template.replace(pattern, (_match, name: string) => valueText(args[name], mode));
}

/** True when the template's first non-space character opens a JSON object or array. */
export function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === '{' || first === '[';
}

/**
 * Deep-copies an object/array template: a string leaf that is exactly one placeholder becomes the
 * argument value itself (any JSON type); other string leaves get text substitution. Keys are kept.
 */
export function substituteStructured(template: unknown, args: JsonObject): unknown {
  const pattern = placeholderPattern(args);
  const whole = pattern && new RegExp(`^${pattern.source}$`);
  // Bounded recursion: a manual's message template nested deeper is refused (docs/design/threat-model.md#edges-and-nesting).
  const walk = (node: unknown, depth: number): unknown => {
    if (typeof node === 'string') {
      if (!pattern || !whole) return node;
      const m = whole.exec(node);
      if (m) return args[m[1]];
      return node.replace(pattern, (_match, name: string) => valueText(args[name], 'raw'));
    }
    if (node === null || typeof node !== 'object') return node;
    if (depth >= MAX_TEMPLATE_NESTING_DEPTH) throw nestedTooDeep('message template', ['message']);
    if (Array.isArray(node)) return node.map((v) => walk(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(node)) {
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: walk(v, depth + 1),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[k] = walk(v, depth + 1);
    }
    return out;
  };
  return walk(template, 0);
}

/**
 * The text frame a WebSocket tool call sends (docs/design/transports.md#websocket): null → the arguments as JSON;
 * object/array → structured substitution, then JSON; string → JSON-escaped substitution when it looks like JSON, else raw.
 */
export function buildWebSocketMessage(message: unknown, args: JsonObject): string {
  if (message === null || message === undefined) return JSON.stringify(args);
  if (typeof message === 'string')
    return substitutePlaceholders(message, args, looksLikeJson(message) ? 'json-escaped' : 'raw');
  return JSON.stringify(substituteStructured(message, args));
}

/** Whether a template (string, object or array, at any depth) mentions the placeholder of `name`. */
export function templateMentions(template: unknown, name: string): boolean {
  const needle = socketPlaceholder(name);
  const mentions = (node: unknown, depth: number): boolean => {
    if (typeof node === 'string') return node.includes(needle);
    if (node === null || typeof node !== 'object') return false;
    if (depth >= MAX_TEMPLATE_NESTING_DEPTH) throw nestedTooDeep('message template', ['message']);
    return Object.values(node as Record<string, unknown>).some((v) => mentions(v, depth + 1));
  };
  return mentions(template, 0);
}

/** The tool name sent on the wire: bare (`<manual>.` stripped) unless `qualified`. */
export function wireToolName(tool: Tool, manualName: string, mode: 'bare' | 'qualified' | null | undefined): string {
  if (mode === 'qualified') return tool.name;
  const prefix = `${manualName}.`;
  return tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
}

/**
 * The tcp/udp request payload (docs/design/transports.md#tcp): `json` → the arguments (or `{tool, args}` with
 * `request_wrapper: "tool_args"`) as JSON; `text` → the template with placeholders replaced
 * (strings raw, others JSON), or the argument values joined by one space when there is no template.
 */
export function buildSocketPayload(template: SocketRequestOptions, args: JsonObject, wireName: string): string {
  const format = template.request_data_format ?? 'json';
  if (format === 'text') {
    const text = template.request_data_template;
    if (typeof text === 'string') return substitutePlaceholders(text, args, 'raw');
    return Object.values(args)
      .map(argToText)
      .filter((v): v is string => v !== undefined)
      .join(' ');
  }
  if (format !== 'json') throw new UtcpError('INVALID_CONFIG', `Unknown request_data_format "${String(format)}"`);
  const body = template.request_wrapper === 'tool_args' ? { tool: wireName, args } : args;
  return JSON.stringify(body);
}

/**
 * The discovery message to send, as text: the default `{"type":"utcp"}` when the field is absent,
 * objects as JSON, strings as-is; undefined when discovery is disabled (`null`).
 */
export function discoveryMessageText(message: string | JsonObject | null | undefined): string | undefined {
  if (message === undefined) return JSON.stringify(DEFAULT_DISCOVERY_MESSAGE);
  if (message === null) return undefined;
  return typeof message === 'string' ? message : JSON.stringify(message);
}

const ENCODING_ALIASES: Record<string, string> = {
  'latin-1': 'latin1',
  latin_1: 'latin1',
  utf_8: 'utf-8',
  'utf-16': 'utf-16le',
  utf_16: 'utf-16le',
};

/** A decoder for a `response_byte_format` label (WHATWG labels plus Python spellings such as `latin-1`). */
export function textDecoderFor(label: string): TextDecoder {
  const key = label.trim().toLowerCase();
  try {
    return new TextDecoder(ENCODING_ALIASES[key] ?? key);
  } catch (cause) {
    throw new UtcpError('INVALID_CONFIG', `Unknown response_byte_format "${label}"`, { cause });
  }
}

/**
 * Decodes response bytes (docs/design/transports.md#tcp): with a `response_byte_format` label, text then JSON
 * (falling back to the text); with null, the raw bytes as a Uint8Array.
 */
export function decodeResponseBytes(bytes: Uint8Array, byteFormat: string | null | undefined): unknown {
  if (byteFormat === null) return new Uint8Array(bytes);
  const text = textDecoderFor(byteFormat ?? 'utf-8').decode(bytes);
  return parseJsonOrText(text);
}
