/**
 * What the model sees in code mode: tools as TypeScript declarations, JSDoc from descriptions and schemas
 * (docs/design/code-mode.md#declarations).
 */
import type { JsonSchema, Tool, UtcpClient } from '../index.js';
import { isIdentifier, manualAccess, selectTools, type CodeToolSelection } from './script-names.js';

const MAX_DEPTH = 6;
const MAX_DESCRIPTION_CHARS = 400;

/** Text safe inside a JSDoc block: no `*\/`, one line per line, bounded. */
function docText(text: string): string {
  const t = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : text;
  return t.replace(/\*\//g, '*\\/').replace(/\r?\n/g, ' ').trim();
}

function doc(lines: readonly string[], indent: string): string {
  const kept = lines.filter((l) => l !== '');
  if (kept.length === 0) return '';
  if (kept.length === 1) return `${indent}/** ${kept[0]} */\n`;
  return `${indent}/**\n${kept.map((l) => `${indent} * ${l}`).join('\n')}\n${indent} */\n`;
}

function key(name: string): string {
  return isIdentifier(name) ? name : JSON.stringify(name);
}

/** Notes a schema's constraints the type cannot say (formats, bounds, defaults). */
function notes(s: JsonSchema): string[] {
  const out: string[] = [];
  if (typeof s.description === 'string') out.push(docText(s.description));
  if (typeof s.format === 'string') out.push(`@format ${docText(s.format)}`);
  for (const k of ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern'] as const)
    if (s[k] !== undefined) out.push(`@${k} ${docText(String(s[k]))}`);
  if (s.default !== undefined) out.push(`@default ${docText(JSON.stringify(s.default) ?? '')}`);
  return out;
}

function literal(value: unknown): string {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value) ? JSON.stringify(value) : 'unknown';
}

/** The TypeScript type of a JSON schema (draft 7 / 2020-12 keywords that affect shape; others become JSDoc). */
export function schemaToType(schema: unknown, indent = '', depth = 0): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (typeof schema !== 'object' || schema === null || depth > MAX_DEPTH) return 'unknown';
  const s = schema as JsonSchema;
  if (s.const !== undefined) return literal(s.const);
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.map(literal).join(' | ');
  const union = (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : undefined) as
    | unknown[]
    | undefined;
  if (union && union.length > 0) return union.map((x) => wrap(schemaToType(x, indent, depth + 1))).join(' | ');
  if (Array.isArray(s.allOf) && s.allOf.length > 0)
    return s.allOf.map((x) => wrap(schemaToType(x, indent, depth + 1))).join(' & ');
  const types = Array.isArray(s.type) ? (s.type as string[]) : typeof s.type === 'string' ? [s.type] : [];
  if (types.length === 0 && (s.properties || s.additionalProperties)) types.push('object');
  if (types.length === 0 && s.items) types.push('array');
  if (types.length === 0) return 'unknown';
  return types.map((t) => wrap(oneType(t, s, indent, depth))).join(' | ');
}

function wrap(type: string): string {
  return /[|&]/.test(type) && !type.startsWith('{') ? `(${type})` : type;
}

function oneType(type: string, s: JsonSchema, indent: string, depth: number): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(s.prefixItems))
        return `[${(s.prefixItems as unknown[]).map((x) => schemaToType(x, indent, depth + 1)).join(', ')}]`;
      return `Array<${schemaToType(s.items, indent, depth + 1)}>`;
    }
    case 'object':
      return objectType(s, indent, depth);
    default:
      return 'unknown';
  }
}

function objectType(s: JsonSchema, indent: string, depth: number): string {
  const props = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const inner = `${indent}  `;
  let body = '';
  for (const [name, sub] of Object.entries(props)) {
    const subSchema = (sub && typeof sub === 'object' ? sub : {}) as JsonSchema;
    body += doc(notes(subSchema), inner);
    body += `${inner}${key(name)}${required.has(name) ? '' : '?'}: ${schemaToType(sub, inner, depth + 1)};\n`;
  }
  const extra = s.additionalProperties;
  if (extra && typeof extra === 'object') body += `${inner}[key: string]: ${schemaToType(extra, inner, depth + 1)};\n`;
  else if (extra !== false && Object.keys(props).length === 0) return 'Record<string, unknown>';
  return body === '' ? '{}' : `{\n${body}${indent}}`;
}

function hasShape(schema: unknown): boolean {
  return !!schema && typeof schema === 'object' && Object.keys(schema).length > 0;
}

/** One tool's method declaration, JSDoc included, as it appears inside its manual's object type. */
function method(tool: Tool, indent: string): string {
  const { key: name } = manualAccess(tool.name);
  const lines = [tool.description ? docText(tool.description) : ''];
  if (tool.tags && tool.tags.length > 0) lines.push(`Tags: ${docText(tool.tags.join(', '))}`);
  const args = hasShape(tool.inputs) ? schemaToType(tool.inputs, indent) : 'Record<string, unknown>';
  const out = hasShape(tool.outputs) ? schemaToType(tool.outputs, indent) : 'unknown';
  return `${doc(lines, indent)}${indent}${key(name)}(args: ${args}): Promise<${out}>;\n`;
}

/**
 * Declarations for `tools`, one `declare const <manual>: { ... }` per manual, each tool an async method taking
 * one object argument: `manual.tool` is called as `await manual.tool({ ... })`.
 */
export function declarationsFor(tools: readonly Tool[]): string {
  const byManual = new Map<string, Tool[]>();
  for (const tool of tools) {
    const { manual } = manualAccess(tool.name);
    byManual.set(manual, [...(byManual.get(manual) ?? []), tool]);
  }
  let out = '';
  for (const [manual, list] of byManual) {
    out += `declare const ${manual}: {\n`;
    for (const tool of list) out += method(tool, '  ');
    out += '};\n';
  }
  return out;
}

/**
 * The selected tools (default: every registered tool) as TypeScript declarations for a model to code against. For a
 * large catalog, search first and pass the tools found: `toolsAsTypeScript(client, await client.searchTools(q))`.
 */
export async function toolsAsTypeScript(
  client: Pick<UtcpClient, 'getTools'>,
  tools?: readonly Tool[] | CodeToolSelection,
): Promise<string> {
  const isToolList = Array.isArray(tools) && tools.every((t) => typeof t === 'object' && t !== null);
  const chosen = isToolList
    ? (tools as readonly Tool[])
    : selectTools(await client.getTools(), tools as CodeToolSelection | undefined);
  return declarationsFor(chosen);
}

/** One tool's declaration (the official `@utcp/code-mode` name): `declare const manual: { tool(args): ... }`. */
export function toolToTypeScriptInterface(tool: Tool): string {
  return declarationsFor([tool]);
}
