import type { JsonSchema, Tool } from '../index.js';
import { relaxOutputSchema } from './bridge-output-schema.js';
import { isPlainObject as isRecord, errorMessage } from '../internal.js';

/** The subset of an MCP `Tool` the bridge lists. */
export interface McpToolDescriptor {
  name: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
}

/** The subset of an MCP `CallToolResult` the bridge returns. */
/** MCP image or audio content: base64 `data` and its `mimeType`. */
export interface McpMediaContent {
  type: 'image' | 'audio';
  data: string;
  mimeType: string;
}

/** MCP embedded resource content carrying binary data (`blob`, base64). */
export interface McpBlobContent {
  type: 'resource';
  resource: { uri: string; mimeType: string; blob: string };
}

/** The URI of a binary tool result served as an embedded resource: it names no resource a client could read again. */
export const BINARY_RESULT_URI = 'urn:utcp-kit:tool-result';

export interface McpCallToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string } | McpMediaContent | McpBlobContent>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** True for `{...}` literals and `Object.create(null)`; false for arrays, class instances, buffers, dates. */
export function isLiteralObject(value: unknown): value is Record<string, unknown> {
  if (!isRecord(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function declaresObject(schema: JsonSchema): boolean {
  const t = schema.type;
  return t === 'object' || (Array.isArray(t) && t.includes('object'));
}

/**
 * An MCP `inputSchema` from a tool's `inputs`: MCP requires `type: "object"` at the root, so it is
 * added when missing. A root that declares another type cannot describe an MCP arguments object and
 * becomes a bare object schema (the client still validates the real arguments against `inputs`).
 */
export function toInputSchema(inputs: JsonSchema | undefined): McpToolDescriptor['inputSchema'] {
  if (!isRecord(inputs)) return { type: 'object' };
  if (inputs.type === undefined || declaresObject(inputs)) return { ...inputs, type: 'object' };
  return { type: 'object' };
}

/** An MCP `outputSchema` from a tool's `outputs`, only when it is an object schema (MCP's rule). */
const relaxed = new WeakMap<object, McpToolDescriptor['outputSchema']>();

/**
 * The output schema advertised for a tool's `outputs`: a relaxed copy the bridge can keep (no closed objects, only
 * formats hosts know; docs/design/transports.md#mcp-bridge-output-schemas), computed once per schema.
 */
export function toOutputSchema(outputs: JsonSchema | undefined): McpToolDescriptor['outputSchema'] {
  if (!isRecord(outputs) || outputs.type !== 'object') return undefined;
  let schema = relaxed.get(outputs);
  if (!schema) relaxed.set(outputs, (schema = { ...relaxOutputSchema(outputs), type: 'object' }));
  return schema;
}

/** The MCP listing of one UTCP tool under its MCP name. */
export function toMcpTool(tool: Tool, mcpName: string, withOutputSchema: boolean): McpToolDescriptor {
  const descriptor: McpToolDescriptor = { name: mcpName, inputSchema: toInputSchema(tool.inputs) };
  if (tool.description) descriptor.description = tool.description;
  const outputSchema = withOutputSchema ? toOutputSchema(tool.outputs) : undefined;
  if (outputSchema) descriptor.outputSchema = outputSchema;
  return descriptor;
}

/** Result → text: strings as they are, anything else as JSON (bigints as strings, `undefined` as `null`). */
export function resultToText(result: unknown): string {
  if (typeof result === 'string') return result;
  try {
    return JSON.stringify(result ?? null, (_key, v) => (typeof v === 'bigint' ? v.toString() : v)) ?? String(result);
  } catch {
    return String(result);
  }
}

/** A media result `{ type: "image" | "audio", mimeType, data }` (exactly these fields), as MCP content. */
function mediaItem(result: unknown): McpMediaContent | undefined {
  if (!isLiteralObject(result)) return undefined;
  const { type, mimeType, data } = result;
  if ((type !== 'image' && type !== 'audio') || typeof mimeType !== 'string' || typeof data !== 'string')
    return undefined;
  if (Object.keys(result).length !== 3) return undefined;
  return { type, data, mimeType };
}

/** A binary result `{ type: "binary", mimeType, data }` (exactly these fields), as an MCP blob resource. */
function blobItem(result: unknown): McpBlobContent | undefined {
  if (!isLiteralObject(result)) return undefined;
  const { type, mimeType, data } = result;
  if (type !== 'binary' || typeof mimeType !== 'string' || typeof data !== 'string') return undefined;
  if (Object.keys(result).length !== 3) return undefined;
  return { type: 'resource', resource: { uri: BINARY_RESULT_URI, mimeType, blob: data } };
}

/**
 * A tool result as MCP content, with `structuredContent` when the result is a plain object; a media result becomes
 * MCP image/audio content.
 */
export function toCallToolResult(result: unknown, options: { structured?: boolean } = {}): McpCallToolResult {
  const blob = blobItem(result);
  if (blob) {
    // Binary data (e.g. an HTTP tool answering application/zip) as an embedded blob resource, the MCP content that
    // carries bytes of any type; structuredContent only when the tool advertises an output schema.
    const out: McpCallToolResult = { content: [blob] };
    if (options.structured) out.structuredContent = { ...(result as Record<string, unknown>) };
    return out;
  }
  const media = mediaItem(result);
  if (media) {
    // An image or sound (e.g. an HTTP tool answering image/png, docs/design/transports.md#http-response) is served as
    // MCP image/audio content; structuredContent only when the tool advertises an output schema (MCP requires it then).
    const out: McpCallToolResult = { content: [media] };
    if (options.structured) out.structuredContent = { ...media };
    return out;
  }
  const text = resultToText(result);
  const out: McpCallToolResult = { content: [{ type: 'text', text }] };
  if (isLiteralObject(result)) {
    // Round-trip through the text we already made so structuredContent is plain JSON (no bigint, no undefined).
    try {
      out.structuredContent = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Unserialisable (e.g. circular): the text content alone carries the result.
    }
  }
  return out;
}

/** A failed call as an MCP tool error the model can read. */
export function toErrorResult(error: unknown): McpCallToolResult {
  const message = errorMessage(error);
  const content: McpCallToolResult['content'] = [{ type: 'text', text: message || 'Tool call failed' }];
  // The API's own problem document (field errors...) follows, so a model can fix its arguments
  // (docs/design/http-exchange.md#problem-details).
  const problem = (error as { problem?: unknown } | null)?.problem;
  if (problem && typeof problem === 'object')
    content.push({ type: 'text', text: `Response body: ${JSON.stringify(problem)}` });
  return { content, isError: true };
}
