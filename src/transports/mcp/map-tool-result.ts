import { ToolExecutionError } from '../../core/errors.js';

/** The parts of an MCP `tools/call` result that the mapping reads. */
export interface McpToolResult {
  content?: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
  /** Protocol 2024-10-07 servers answer with `toolResult` instead of `content`. */
  toolResult?: unknown;
  [key: string]: unknown;
}

const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function isTextItem(item: unknown): item is { type: 'text'; text: string } {
  return (
    typeof item === 'object' &&
    item !== null &&
    (item as { type?: unknown }).type === 'text' &&
    typeof (item as { text?: unknown }).text === 'string'
  );
}

/**
 * One content item → a value: text holding a JSON object or array → parsed, text holding a JSON
 * number → number, other text → the text; image, audio, resource and resource_link items unchanged.
 */
export function mapContentItem(item: unknown): unknown {
  if (!isTextItem(item)) return item;
  const text = item.text;
  const trimmed = text.trim();
  if ((trimmed.startsWith('{') && trimmed.endsWith('}')) || (trimmed.startsWith('[') && trimmed.endsWith(']'))) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  if (JSON_NUMBER.test(trimmed)) return Number(trimmed);
  return text;
}

/** The server's error text: the text items joined by newlines. */
export function errorText(result: McpToolResult): string {
  const texts = (Array.isArray(result.content) ? result.content : []).filter(isTextItem).map((i) => i.text);
  return texts.join('\n');
}

/**
 * Maps a `tools/call` result to the value the caller receives (docs/design/transports.md#mcp-results):
 * `isError` → ToolExecutionError; non-null `structuredContent` (an object whose only key is
 * `result` is unwrapped); else `content`: `[]` → `[]`, one item → that item mapped, several → an array.
 * @throws ToolExecutionError when the server flagged the result as an error.
 */
export function mapToolResult(result: McpToolResult, toolLabel: string): unknown {
  if (result.isError === true) {
    const text = errorText(result);
    const shown = text.length > 1000 ? `${text.slice(0, 1000)}…` : text;
    throw new ToolExecutionError(`MCP tool ${toolLabel} returned an error${shown ? `: ${shown}` : ''}`, {
      text,
      content: result.content,
      structuredContent: result.structuredContent,
    });
  }
  const structured = result.structuredContent;
  if (structured !== undefined && structured !== null) {
    if (typeof structured === 'object' && !Array.isArray(structured)) {
      const keys = Object.keys(structured);
      if (keys.length === 1 && keys[0] === 'result') return (structured as { result: unknown }).result;
    }
    return structured;
  }
  if (!Array.isArray(result.content)) return 'toolResult' in result ? result.toolResult : [];
  if (result.content.length === 0) return [];
  if (result.content.length === 1) return mapContentItem(result.content[0]);
  return result.content.map(mapContentItem);
}
