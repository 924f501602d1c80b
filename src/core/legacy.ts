/**
 * Normalisation of legacy v0.1 ("provider") manuals, templates and configs into UTCP 1.x
 * (docs/design/manual-format.md#legacy). Inputs are never mutated; every rewrite is reported.
 */

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const TYPE_ALIASES: Record<string, string> = {
  http_stream: 'streamable_http',
  http_sse: 'sse',
  http_ndjson: 'streamable_http',
  http_octet_stream: 'streamable_http',
};

/** Types whose discovery endpoint is also the call endpoint: tools without a template inherit the manual's. */
export const INHERITING_TYPES = new Set(['websocket', 'tcp', 'udp', 'grpc', 'graphql', 'mcp']);

function normalizeAuth(auth: unknown, notes: string[], where: string): unknown {
  if (!isObj(auth)) return auth;
  let out: Obj = auth;
  const copy = () => (out === auth ? (out = { ...auth }) : out);
  if (out.auth_type === undefined && typeof out.type === 'string') {
    copy();
    out.auth_type = out.type;
    delete out.type;
    notes.push(`${where}: legacy auth "type" renamed to "auth_type"`);
  }
  if (out.auth_type === 'api_key') {
    if (out.location === undefined && typeof out.in === 'string') {
      copy();
      out.location = out.in;
      delete out.in;
    }
  }
  return out;
}

/** Template types whose `timeout` is in milliseconds (websocket and MCP servers use seconds). */
const MS_TIMEOUT_TYPES = new Set(['http', 'sse', 'streamable_http', 'cli', 'tcp', 'udp', 'graphql', 'grpc']);
/** A millisecond `timeout` below this is taken as seconds (docs/design/transports.md#timeout-units). */
const SECONDS_BELOW = 1000;

/** Normalises one call template / v0.1 provider object. Returns the input itself when nothing changed. */
export function normalizeCallTemplate(value: unknown, notes: string[] = [], where = 'call template'): unknown {
  if (!isObj(value)) return value;
  let out: Obj = value;
  const copy = () => (out === value ? (out = { ...value }) : out);
  if (out.call_template_type === undefined) {
    const alias = out.provider_type !== undefined ? 'provider_type' : out.type !== undefined ? 'type' : undefined;
    if (alias) {
      copy();
      out.call_template_type = out[alias];
      delete out[alias];
      notes.push(`${where}: legacy "${alias}" renamed to "call_template_type"`);
    }
  }
  const type = out.call_template_type;
  if (typeof type === 'string' && TYPE_ALIASES[type]) {
    copy();
    out.call_template_type = TYPE_ALIASES[type];
    notes.push(`${where}: legacy type "${type}" mapped to "${out.call_template_type}"`);
  }
  if (out.call_template_type === 'text' && out.file_path !== undefined && out.content === undefined) {
    copy();
    out.call_template_type = 'file';
    notes.push(`${where}: legacy "text" template with "file_path" mapped to "file"`);
  }
  const t = out.call_template_type;
  if (t === 'http' || t === 'sse' || t === 'streamable_http') {
    if (out.http_method === undefined && typeof out.method === 'string') {
      copy();
      out.http_method = out.method;
      delete out.method;
    }
    if (typeof out.http_method === 'string' && out.http_method !== out.http_method.toUpperCase()) {
      copy();
      out.http_method = out.http_method.toUpperCase();
    }
  }
  if ((t === 'tcp' || t === 'udp') && out.timeout === undefined && out.timeout_ms !== undefined) {
    copy();
    out.timeout = out.timeout_ms;
    delete out.timeout_ms;
  } else if (typeof t === 'string' && MS_TIMEOUT_TYPES.has(t) && typeof out.timeout === 'number' && out.timeout > 0 && out.timeout < SECONDS_BELOW) {
    // Other implementations write seconds here (the official converter: `timeout: 30`); no real deadline is
    // under a second, so small values are seconds (docs/design/transports.md#timeout-units).
    copy();
    notes.push(`${where}: timeout ${out.timeout} read as seconds (${out.timeout * 1000} ms); values below ${SECONDS_BELOW} are seconds, write milliseconds to silence this`);
    out.timeout = out.timeout * 1000;
  }
  if (t === 'cli') {
    if (out.commands === undefined && typeof out.command_name === 'string') {
      copy();
      out.commands = [{ command: out.command_name }];
      delete out.command_name;
      notes.push(`${where}: legacy "command_name" mapped to "commands"`);
    }
    if (out.env_vars === undefined && isObj(out.env)) {
      copy();
      out.env_vars = out.env;
      delete out.env;
    }
    for (const dropped of ['param_style', 'output_format']) {
      if (out[dropped] !== undefined) {
        copy();
        delete out[dropped];
        notes.push(`${where}: legacy "${dropped}" is not supported and was dropped`);
      }
    }
  }
  if (out.auth !== undefined) {
    const auth = normalizeAuth(out.auth, notes, where);
    if (auth !== out.auth) {
      copy();
      out.auth = auth;
    }
  }
  return out;
}

/**
 * Normalises a discovered manual: `version` → `utcp_version`, `tool_provider`/`provider` → `tool_call_template`,
 * `parameters` → `inputs`, and (for endpoint-sharing types) tools without a template inherit `manualTemplate`.
 */
export function normalizeManual(value: unknown, manualTemplate: Obj | undefined, notes: string[] = []): unknown {
  if (!isObj(value)) return value;
  const out: Obj = { ...value };
  if (out.utcp_version === undefined && typeof out.version === 'string') out.utcp_version = out.version;
  if (!Array.isArray(out.tools)) return out;
  const inherit = manualTemplate && INHERITING_TYPES.has(String(manualTemplate.call_template_type)) ? manualTemplate : undefined;
  const toolNotes: string[] = [];
  out.tools = out.tools.map((tool, i) => {
    if (!isObj(tool)) return tool;
    let t: Obj = tool;
    const copy = () => (t === tool ? (t = { ...tool }) : t);
    if (t.tool_call_template === undefined) {
      const alias = t.tool_provider !== undefined ? 'tool_provider' : t.provider !== undefined ? 'provider' : undefined;
      if (alias) {
        copy();
        t.tool_call_template = t[alias];
        delete t[alias];
      } else if (inherit) {
        copy();
        t.tool_call_template = inherit;
      }
    }
    if (t.inputs === undefined && t.parameters !== undefined) {
      copy();
      t.inputs = t.parameters;
      delete t.parameters;
    }
    if (t.tool_call_template !== undefined && t.tool_call_template !== inherit) {
      const tpl = normalizeCallTemplate(t.tool_call_template, toolNotes, `tools[${i}].tool_call_template`);
      if (tpl !== t.tool_call_template) {
        copy();
        t.tool_call_template = tpl;
      }
    }
    return t;
  });
  // One line for the timeouts read as seconds, not one per tool (a converted spec has hundreds).
  const seconds = toolNotes.filter((n) => n.includes(' read as seconds ('));
  notes.push(...toolNotes.filter((n) => !seconds.includes(n)));
  if (seconds.length === 1) notes.push(seconds[0]);
  else if (seconds.length > 1) notes.push(`${seconds.length} tool templates: timeout below ${SECONDS_BELOW} read as seconds (first: ${seconds[0]})`);
  return out;
}
