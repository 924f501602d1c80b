import { UtcpError } from '../../core/errors.js';
import { isPlainObject as isObject } from '../../core/guards.js';

type Obj = Record<string, unknown>;

function tryJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/**
 * A call's result (docs/design/transports.md#cli): the trimmed output, parsed as JSON when it starts with `{` or `[`
 * and parses; otherwise the string (`""` when empty).
 */
export function parseCallOutput(output: string): unknown {
  const text = output.trim();
  if (text.startsWith('{') || text.startsWith('[')) {
    const parsed = tryJson(text);
    if (parsed.ok) return parsed.value;
  }
  return text;
}

function assembled(tools: unknown[]): Obj {
  return { utcp_version: '1.0.0', manual_version: '0.0.0', tools };
}

/**
 * Discovery output → manual document (docs/design/transports.md#cli): the whole output as JSON (a manual, a tool array
 * or one tool), else each line that looks like a JSON object (the first with `tools` is the manual; those
 * with `name` are collected as tools). Throws `INVALID_MANUAL` when nothing is found.
 */
export function parseDiscoveryOutput(output: string, what: string): Obj {
  const text = output.trim();
  const whole = text === '' ? { ok: false as const } : tryJson(text);
  if (whole.ok) {
    const value = whole.value;
    if (isObject(value) && Array.isArray(value.tools)) return value;
    if (Array.isArray(value)) return assembled(value);
    if (isObject(value) && typeof value.name === 'string') return assembled([value]);
  }
  const tools: unknown[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith('{') || !line.endsWith('}')) continue;
    const parsed = tryJson(line);
    if (!parsed.ok || !isObject(parsed.value)) continue;
    if (Array.isArray(parsed.value.tools)) return parsed.value;
    if (typeof parsed.value.name === 'string') tools.push(parsed.value);
  }
  if (tools.length > 0) return assembled(tools);
  throw new UtcpError('INVALID_MANUAL', `${what}: the output holds no UTCP manual or tool definitions`);
}
