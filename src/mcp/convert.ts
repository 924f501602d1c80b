import type { JsonSchema, Tool } from '../index.js';

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

export interface McpCallToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string } | McpMediaContent>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for `{...}` literals and `Object.create(null)`; false for arrays, class instances, buffers, dates. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
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
export function toOutputSchema(outputs: JsonSchema | undefined): McpToolDescriptor['outputSchema'] {
  if (!isRecord(outputs) || outputs.type !== 'object') return undefined;
  return { ...outputs, type: 'object' };
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
  if (!isPlainObject(result)) return undefined;
  const { type, mimeType, data } = result;
  if ((type !== 'image' && type !== 'audio') || typeof mimeType !== 'string' || typeof data !== 'string')
    return undefined;
  if (Object.keys(result).length !== 3) return undefined;
  return { type, data, mimeType };
}

/**
 * A tool result as MCP content, with `structuredContent` when the result is a plain object; a media result becomes
 * MCP image/audio content.
 */
export function toCallToolResult(result: unknown, options: { structured?: boolean } = {}): McpCallToolResult {
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
  if (isPlainObject(result)) {
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
  const message = error instanceof Error ? error.message : String(error);
  return { content: [{ type: 'text', text: message || 'Tool call failed' }], isError: true };
}
