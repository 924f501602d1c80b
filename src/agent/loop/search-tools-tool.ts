import type { JsonObject, Tool } from '../../index.js';
import type { ModelToolDefinition } from '../chat-model.js';
import type { ToolNameCodec } from '../export/tool-names.js';

/** The name of the meta tool offered when the catalog is too large to send whole. */
export const SEARCH_TOOLS_NAME = 'search_tools';

const DEFAULT_RESULTS = 8;
const MAX_RESULTS = 20;
const RESULT_DESCRIPTION_CHARS = 300;

/** @internal The `search_tools` definition for a catalog of `catalogSize` tools. */
export function searchToolsDefinition(catalogSize: number, codeModeTool?: string): ModelToolDefinition {
  const what = codeModeTool
    ? `returns the TypeScript declarations of the tools found, to call from a script you run with ${codeModeTool}. `
    : 'makes the tools found callable from your next step. ';
  return {
    name: SEARCH_TOOLS_NAME,
    description:
      `Searches a catalog of ${catalogSize} tools by keywords and ${what}` +
      'Describe the action and the service or object (e.g. "create github issue", "weather forecast"). Search again with other words if nothing fits.',
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Keywords describing the tool you need.' },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: MAX_RESULTS,
          description: `How many tools to return. Default ${DEFAULT_RESULTS}.`,
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
  };
}

/** @internal The query and limit from `search_tools` arguments, or a message for the model. */
export function parseSearchArguments(args: JsonObject): { query: string; limit: number } | { error: string } {
  if (typeof args.query !== 'string' || args.query.trim() === '')
    return { error: 'search_tools needs a non-empty "query" string.' };
  const limit = args.limit === undefined || args.limit === null ? DEFAULT_RESULTS : Number(args.limit);
  if (!Number.isInteger(limit) || limit < 1)
    return { error: `search_tools: "limit" must be an integer from 1 to ${MAX_RESULTS}.` };
  return { query: args.query, limit: Math.min(limit, MAX_RESULTS) };
}

/** @internal What the model reads after a search: the tools found, under the names it must call them by. */
export function searchResultText(found: readonly Tool[], names: ToolNameCodec): string {
  if (found.length === 0) return JSON.stringify({ tools: [], message: 'No tools matched. Try other keywords.' });
  const tools = found.map((t) => {
    const d = t.description ?? '';
    return {
      name: names.encode(t.name),
      description: d.length > RESULT_DESCRIPTION_CHARS ? `${d.slice(0, RESULT_DESCRIPTION_CHARS - 1)}…` : d,
    };
  });
  return JSON.stringify({
    tools,
    message: `${found.length} tools are now available: call them directly in your next step.`,
  });
}
