/**
 * Turns command-line sources (a manual or OpenAPI file or URL, a config file, an MCP server command)
 * into manual call templates, and builds a client from them plus the discovered config.
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { BUILTIN_CALL_TEMPLATE_TYPES, UtcpClient, type RegisterManualResult, type UtcpClientConfig } from '../index.js';
import { isLoopbackLike, loadConfig } from '../internal.js';
import { SourceError, UsageError } from './cli-errors.js';
import { progress } from './output.js';

export const CONFIG_NAMES = ['utcp.config.json', 'utcp.config.yaml', 'utcp.config.yml'];

export interface ResolvedSource {
  /** A manual call template, or a config file to merge. */
  template?: Record<string, unknown>;
  configPath?: string;
  /** Where the manual comes from, as `inspect` shows it (`file manual.json`), when its template type does not say. */
  origin?: string;
}

/** Splits a command line into words, honouring single and double quotes. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let cur = '';
  let quote: string | null = null;
  let has = false;
  for (const ch of line) {
    if (quote) {
      if (ch === quote) quote = null;
      else cur += ch;
    } else if (ch === '"' || ch === "'") {
      quote = ch;
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) words.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (has || cur) words.push(cur);
  return words;
}

/** A readable manual name for an MCP server command: the package or script that names the server. */
function mcpServerName(words: string[]): string {
  for (const w of words) {
    if (w.startsWith('-')) continue;
    const m = /(?:^|[/@])((?:mcp-)?server-[\w-]+|[\w-]*mcp[\w-]*)/i.exec(w);
    if (m) return m[1].replace(/^(mcp-)?server-/i, '').replace(/(^mcp-|-mcp$)/i, '') || 'mcp';
  }
  const last = words.filter((w) => !w.startsWith('-')).pop() ?? 'mcp';
  return basename(last).replace(/\.(m?js|ts|py)$/, '') || 'mcp';
}

function uniqueName(base: string, used: Set<string>): string {
  let name =
    base
      .replace(/[^A-Za-z0-9_]/g, '_')
      .replace(/_+/g, '_')
      .replace(/^_|_$/g, '') || 'manual';
  if (/^\d/.test(name)) name = `m_${name}`;
  let candidate = name;
  for (let i = 2; used.has(candidate); i++) candidate = `${name}_${i}`;
  used.add(candidate);
  return candidate;
}

function looksLikeConfig(doc: unknown): boolean {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return false;
  return [
    'manual_call_templates',
    'variables',
    'load_variables_from',
    'providers_file_path',
    'providers',
    'post_processing',
  ].some((k) => k in doc);
}

/**
 * Resolves one source. `mcp:<command line>` or `mcp:<url>` is an MCP server; an http(s) URL is fetched by the
 * http transport (a UTCP manual or an OpenAPI spec); anything else is a local file (manual, spec or config).
 */
export async function resolveSource(
  source: string,
  cwd: string,
  used: Set<string>,
  options: { name?: string; baseUrl?: string } = {},
): Promise<ResolvedSource> {
  if (source.startsWith('mcp:')) {
    const rest = source.slice(4).trim();
    if (/^https?:\/\//i.test(rest)) {
      const name = uniqueName(options.name ?? new URL(rest).hostname.split('.')[0], used);
      return { template: { name, call_template_type: 'mcp', config: { mcpServers: { server: { url: rest } } } } };
    }
    const [command, ...args] = splitCommand(rest);
    if (!command)
      throw new UsageError('mcp: needs a command, e.g. mcp:"npx -y @modelcontextprotocol/server-everything"');
    const base = mcpServerName([command, ...args]);
    return {
      template: {
        name: uniqueName(options.name ?? base, used),
        call_template_type: 'mcp',
        config: { mcpServers: { [base.replace(/\./g, '_') || 'server']: { command, args } } },
      },
    };
  }
  if (/^https?:\/\//i.test(source)) {
    const url = new URL(source);
    // The name selects the manual's variables, so it comes from the host the user chose, never from the file
    // name in the path, which the link's author chose (docs/design/manual-format.md#cli-manual-names).
    // A host like api.github.com names the manual "api_github"; an address or localhost says nothing, so "api".
    const labels = url.hostname.replace(/^www\./, '').split('.');
    const host =
      isLoopbackLike(url) || /^[\d.]+$|^\[/.test(url.hostname)
        ? 'api'
        : labels.slice(0, Math.max(1, labels.length - 1)).join('_');
    const base = options.name ?? host;
    return { template: { name: uniqueName(base, used), call_template_type: 'http', url: source, http_method: 'GET' } };
  }
  const path = resolve(cwd, source);
  if (!existsSync(path))
    throw new SourceError(`No such file: ${source} (a source is a file, an http(s) URL, or mcp:<command>)`, [
      { name: source, errors: ['no such file'] },
    ]);
  const text = readFileSync(path, 'utf8');
  const ext = extname(path).toLowerCase();
  let doc: unknown;
  try {
    doc = ext === '.json' ? JSON.parse(text) : (await import('yaml')).parse(text, { maxAliasCount: 100 });
  } catch {
    doc = undefined;
  }
  if (looksLikeConfig(doc)) return { configPath: path };
  const template: Record<string, unknown> = {
    name: uniqueName(options.name ?? basename(path, extname(path)), used),
    call_template_type: 'text',
    content: text,
    // A local file named on the command line is the user's own: its tools may use any protocol.
    allowed_communication_protocols: [...BUILTIN_CALL_TEMPLATE_TYPES],
  };
  if (options.baseUrl) template.base_url = options.baseUrl;
  return { template, origin: `file ${source}` };
}

export interface CliClientOptions {
  cwd: string;
  sources: string[];
  configPath?: string;
  timeoutMs?: number;
  baseUrl?: string;
  name?: string;
  onResult?: (result: RegisterManualResult) => void;
  /**
   * False for a command that never searches (tools, call, inspect): the search index is then built only if a search
   * comes, so such a run does not pay for indexing every tool (docs/design/manual-format.md#search-index). @default true
   */
  searches?: boolean;
}

/**
 * For a command that does not search: the in-memory bm25 index is built on a first search instead of at registration,
 * unless the config says otherwise (`index_on_first_search`).
 */
function deferIndex(config: UtcpClientConfig): void {
  const repository = config.tool_repository?.tool_repository_type ?? 'in_memory';
  const strategy = config.tool_search_strategy ?? { tool_search_strategy_type: 'bm25' };
  if (repository !== 'in_memory' || strategy.tool_search_strategy_type !== 'bm25') return;
  if (strategy.index_on_first_search !== undefined) return;
  config.tool_search_strategy = { ...strategy, index_on_first_search: true };
}

/** Finds the config (`--config`, else utcp.config.{json,yaml,yml} in cwd), adds `.env`, registers everything. */
export async function createCliClient(
  options: CliClientOptions,
): Promise<{ client: UtcpClient; results: RegisterManualResult[]; origins: Map<string, string> }> {
  const used = new Set<string>();
  const resolved: ResolvedSource[] = [];
  if (options.name !== undefined && options.sources.length !== 1)
    throw new UsageError(
      `--name names one manual source, and ${options.sources.length === 0 ? 'none was given' : `${options.sources.length} were given`}`,
    );
  for (const s of options.sources)
    resolved.push(
      await resolveSource(s, options.cwd, used, {
        baseUrl: options.baseUrl,
        name: options.sources.length === 1 ? options.name : undefined,
      }),
    );
  if (options.name !== undefined && resolved[0]?.configPath)
    throw new UsageError(
      '--name names a manual (a file, a URL or mcp:…), not a config file: name manuals inside the config',
    );
  let configPath = options.configPath ? resolve(options.cwd, options.configPath) : undefined;
  if (!configPath && resolved.every((r) => !r.configPath))
    configPath = CONFIG_NAMES.map((n) => resolve(options.cwd, n)).find((p) => existsSync(p));
  const configPaths = [
    ...(configPath ? [configPath] : []),
    ...resolved.flatMap((r) => (r.configPath ? [r.configPath] : [])),
  ];
  const rootDir = configPaths[0] ? dirname(configPaths[0]) : options.cwd;
  const merged: UtcpClientConfig = { variables: {}, manual_call_templates: [], load_variables_from: [] };
  for (const p of configPaths) {
    if (!existsSync(p)) throw new SourceError(`No such config file: ${p}`, [{ name: p, errors: ['no such file'] }]);
    const { config, warnings } = await loadConfig(p, dirname(p)).catch((cause: Error) => {
      throw new SourceError(`Config ${p} failed to load: ${cause.message}`, [{ name: p, errors: [cause.message] }], {
        cause,
      });
    });
    // A misspelt key (`varibles`) would otherwise only show up later as a missing variable.
    for (const w of warnings) process.stderr.write(`warning: ${p}: ${w}\n`);
    Object.assign(merged.variables!, config.variables);
    merged.manual_call_templates!.push(
      ...config.manual_call_templates.map((t) =>
        t.call_template_type === 'file' && typeof (t as { file_path?: unknown }).file_path === 'string'
          ? { ...t, file_path: resolve(dirname(p), (t as unknown as { file_path: string }).file_path) }
          : t,
      ),
    );
    merged.load_variables_from!.push(
      ...(config.load_variables_from ?? []).map((l) => ({ ...l, env_file_path: resolve(dirname(p), l.env_file_path) })),
    );
    // tool_repository too: several CLI processes (serve-mcp --stateless behind a load balancer) share one catalog.
    for (const key of ['post_processing', 'tool_search_strategy', 'limits', 'resilience', 'tool_repository'] as const)
      if (config[key] !== undefined) (merged as Record<string, unknown>)[key] = config[key];
  }
  if (options.searches === false) deferIndex(merged);
  if (existsSync(resolve(options.cwd, '.env')))
    merged.load_variables_from!.push({ variable_loader_type: 'dotenv', env_file_path: resolve(options.cwd, '.env') });
  for (const t of merged.manual_call_templates!) if (typeof t.name === 'string') used.add(t.name);
  const templates = [...merged.manual_call_templates!, ...resolved.flatMap((r) => (r.template ? [r.template] : []))];
  merged.manual_call_templates = [];
  const client = await UtcpClient.create(merged, { rootDir, timeoutMs: options.timeoutMs });
  const bar = progress('Registering manuals');
  let done = 0;
  const results = await Promise.all(
    templates.map(async (t) => {
      const r = await client.registerManual(t, { timeoutMs: options.timeoutMs });
      bar.update(++done, templates.length);
      options.onResult?.(r);
      return r;
    }),
  );
  bar.done();
  const origins = new Map<string, string>();
  for (const r of resolved)
    if (r.origin && typeof r.template?.name === 'string') origins.set(r.template.name, r.origin);
  return { client, results, origins };
}
