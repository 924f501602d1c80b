import type { Tool } from '../../index.js';
import type { ModelToolDefinition } from '../chat-model.js';
import type { ToolNameCodec } from './tool-names.js';

/** Longest tool description sent to a model, in characters. Long OpenAPI descriptions cost tokens on every turn. */
export const DEFAULT_MAX_DESCRIPTION_CHARS = 1024;

/** @internal The model-facing definition of a registered tool: encoded name, capped description, raw inputs schema. */
export function toolDefinition(
  tool: Tool,
  names: ToolNameCodec,
  maxDescriptionChars = DEFAULT_MAX_DESCRIPTION_CHARS,
): ModelToolDefinition {
  const description = tool.description ?? '';
  return {
    name: names.encode(tool.name),
    description:
      description.length > maxDescriptionChars
        ? `${description.slice(0, Math.max(0, maxDescriptionChars - 1))}…`
        : description,
    inputSchema: tool.inputs ?? {},
  };
}
