/** The `utcp` subcommands: tools, search, call, convert, inspect. */
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { RegisterManualResult, Tool, UtcpClient } from '../index.js';
import { DEFAULT_LIMITS, parseDotenv } from '../internal.js';
import {
  bold,
  cyan,
  dim,
  formatError,
  green,
  jsonError,
  printJsonError,
  red,
  slowCallNotice,
  table,
  yellow,
  type Out,
} from './output.js';
import { type CliClientOptions, createCliClient } from './sources.js';

import { EXIT, SourceError, UsageError } from './cli-errors.js';

export { EXIT, SourceError, UsageError };

export interface Common {
  out: Out;
  cwd: string;
  sources: string[];
  config?: string;
  timeoutMs?: number;
  baseUrl?: string;
  name?: string;
}

/** What every command gives the client from the common flags (sources, --config, --timeout, --base-url, --name). */
export function clientOptions(c: Common): CliClientOptions {
  return {
    cwd: c.cwd,
    sources: c.sources,
    configPath: c.config,
    timeoutMs: c.timeoutMs,
    baseUrl: c.baseUrl,
    name: c.name,
  };
}

function firstLine(s: string, max = 100): string {
  const line = (s ?? '').split('\n')[0].trim();
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

function reportRegistration(out: Out, r: RegisterManualResult, listsWarnings: boolean): void {
  const name = r.manualCallTemplate?.name ?? '(unnamed)';
  if (!r.success) out.info(`${red(out, '✗')} ${name}: ${r.errors.join('; ')}`);
  else if (r.manual.tools.length === 0 && r.warnings.length)
    out.info(`${yellow(out, '!')} ${name}: no tools kept: ${r.warnings[0]}`);
  else if (r.warnings.length && !listsWarnings)
    out.info(dim(out, `${name}: ${r.warnings.length} warning(s); \`utcp inspect\` lists them`));
}

/** The sources that failed, as one SourceError (exit 3), or undefined when all loaded. */
export function sourceFailure(results: readonly RegisterManualResult[]): SourceError | undefined {
  const failed = results
    .filter((r) => !r.success)
    .map((r) => ({ name: r.manualCallTemplate?.name ?? '(unnamed)', errors: r.errors }));
  if (failed.length === 0) return undefined;
  const first = failed[0];
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more source(s))` : '';
  return new SourceError(`Source ${first.name} failed to load: ${first.errors[0] ?? 'unknown error'}${more}`, failed);
}

/**
 * Builds the client, registers the sources and runs `run`. When every source failed, nothing is run and the
 * SourceError is thrown (nothing on stdout); when some failed, `run` still serves the others and the caller
 * reports `failure` (exit 3).
 */
async function withClient<T>(
  c: Common,
  run: (client: UtcpClient, results: RegisterManualResult[], origins: Map<string, string>) => Promise<T>,
  options: { runWhenAllFailed?: boolean; listsWarnings?: boolean; searches?: boolean } = {},
): Promise<{ value: T; failure: SourceError | undefined }> {
  const { client, results, origins } = await createCliClient({
    ...clientOptions(c),
    onResult: (r) => reportRegistration(c.out, r, options.listsWarnings ?? false),
    searches: options.searches ?? true,
  });
  try {
    if (results.length === 0)
      throw new UsageError(
        'No tools to work with: name a source (a manual or OpenAPI file or URL, a config, or mcp:<command>) or add a utcp.config.json here',
      );
    const failure = sourceFailure(results);
    if (failure && !options.runWhenAllFailed && results.every((r) => !r.success)) throw failure;
    return { value: await run(client, results, origins), failure };
  } finally {
    await client.close();
  }
}

/** Prints a list result: JSON (with an `error` object when a source failed) or via `human`. Returns the exit code. */
function finishList<T>(
  c: Common,
  key: string,
  items: T[],
  json: (item: T) => unknown,
  failure: SourceError | undefined,
  human: () => void,
): number {
  if (c.out.json) {
    if (failure)
      c.out.print(JSON.stringify({ error: jsonError(failure, EXIT.SOURCE), [key]: items.map(json) }, null, 2));
    else c.out.print(JSON.stringify(items.map(json), null, 2));
  } else human();
  return failure ? EXIT.SOURCE : EXIT.OK;
}

function toolRow(out: Out, t: Tool): string[] {
  return [cyan(out, t.name), firstLine(t.description), dim(out, t.tags.join(','))];
}

function toolJson(t: Tool) {
  return {
    name: t.name,
    description: t.description,
    tags: t.tags,
    inputs: t.inputs,
    call_template_type: t.tool_call_template.call_template_type,
  };
}

export async function toolsCommand(c: Common, opts: { tag?: string[] }): Promise<number> {
  const { value: tools, failure } = await withClient(
    c,
    async (client) => {
      const all = await client.getTools();
      if (!opts.tag?.length) return all;
      const tags = new Set(opts.tag.map((t) => t.toLowerCase()));
      return all.filter((t) => t.tags.some((x) => tags.has(x.toLowerCase())));
    },
    { searches: false },
  );
  return finishList(c, 'tools', tools, toolJson, failure, () => {
    if (tools.length)
      c.out.print(
        table([
          [bold(c.out, 'TOOL'), bold(c.out, 'DESCRIPTION'), bold(c.out, 'TAGS')],
          ...tools.map((t) => toolRow(c.out, t)),
        ]),
      );
    c.out.info(dim(c.out, `${tools.length} tool(s)`));
    if (failure) c.out.info(formatError(c.out, failure));
  });
}

export async function searchCommand(
  c: Common,
  query: string,
  opts: { limit: number; tag?: string[] },
): Promise<number> {
  const { value: hits, failure } = await withClient(c, (client) =>
    client.searchTools(query, { limit: opts.limit, anyOfTagsRequired: opts.tag ?? null }),
  );
  return finishList(c, 'results', hits, toolJson, failure, () => {
    if (hits.length === 0) c.out.info(`No tool matches "${query}"`);
    else c.out.print(table(hits.map((t, i) => [dim(c.out, `${i + 1}.`), ...toolRow(c.out, t)])));
    if (failure) c.out.info(formatError(c.out, failure));
  });
}

type SchemaNode = { type?: unknown; properties?: Record<string, SchemaNode>; $ref?: string; items?: SchemaNode };

/** The schema of `path` inside a tool's inputs (following local `#/$defs/...` refs), or undefined. */
function schemaAt(inputs: unknown, path: string[]): SchemaNode | undefined {
  const root = inputs as SchemaNode & { $defs?: Record<string, SchemaNode>; definitions?: Record<string, SchemaNode> };
  const deref = (node: SchemaNode | undefined, depth = 0): SchemaNode | undefined => {
    const ref = node?.$ref;
    if (!ref || depth > 16) return node;
    const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(ref);
    return m ? deref(root?.[m[1] as '$defs']?.[m[2]], depth + 1) : node;
  };
  let node = deref(root);
  for (const key of path) node = deref(node?.properties?.[key]);
  return node;
}

const typesOf = (node: SchemaNode | undefined): string[] =>
  (node?.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type]) as string[];

/**
 * Parses `--arg k=v` values into an arguments object. `k.sub=v` builds nested objects. A value is kept as text
 * when the schema says string, else parsed as JSON (falling back to text when it is not JSON).
 * @throws UsageError naming the argument and the fix when a value cannot be what the schema says.
 */
export function parseArgPairs(
  pairs: string[],
  tool: Tool | undefined,
  into: Record<string, unknown> = {},
): Record<string, unknown> {
  const args = into;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw new UsageError(
        `--arg expects name=value, got "${pair}" (nested values: --arg body.title=x or --arg 'body={"title":"x"}')`,
      );
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const path = key.split('.');
    if (path.some((p) => p === '')) throw new UsageError(`--arg name "${key}" has an empty part`);
    const node = schemaAt(tool?.inputs, path);
    const types = typesOf(node);
    let value: unknown;
    if (types.length === 1 && types[0] === 'string') value = raw;
    else {
      try {
        value = JSON.parse(raw);
      } catch {
        if (types.length > 0 && types.every((t) => t === 'object' || t === 'array')) {
          const example =
            types[0] === 'object' ? `'${key}={"name":"value"}' or --arg ${key}.name=value` : `'${key}=["a","b"]'`;
          throw new UsageError(
            `--arg ${key} must be JSON (the tool's schema says ${types.join(' or ')}); write --arg ${example}`,
          );
        }
        value = raw;
      }
    }
    let target = args;
    for (let i = 0; i < path.length - 1; i++) {
      const existing = target[path[i]];
      if (existing === undefined) target[path[i]] = {};
      else if (typeof existing !== 'object' || existing === null || Array.isArray(existing)) {
        const prefix = path.slice(0, i + 1).join('.');
        throw new UsageError(
          `--arg ${key}: ${prefix} is already set to ${JSON.stringify(existing)}; give ${prefix} as one JSON object (--arg '${prefix}={...}') or only as ${prefix}.<name>=... parts`,
        );
      }
      target = target[path[i]] as Record<string, unknown>;
    }
    target[path[path.length - 1]] = value;
  }
  return args;
}

/** The tool by full name, or by its name without the manual prefix when unambiguous; undefined when unknown. */
async function findTool(client: UtcpClient, name: string): Promise<Tool | undefined> {
  const exact = await client.getTool(name);
  if (exact) return exact;
  const matches = (await client.getTools()).filter((t) => t.name.endsWith(`.${name}`));
  if (matches.length > 1) throw new UsageError(`"${name}" is ambiguous: ${matches.map((t) => t.name).join(', ')}`);
  return matches[0];
}

/** Prints one result: raw text and bytes for people; with --json, one JSON document per result (bytes as base64). */
function printResult(out: Out, value: unknown, compact = false): void {
  if (out.json) {
    const v = value instanceof Uint8Array ? { bytes_base64: Buffer.from(value).toString('base64') } : value;
    out.print(JSON.stringify(v === undefined ? null : v, null, compact ? 0 : 2));
  } else if (value instanceof Uint8Array) process.stdout.write(value);
  else if (typeof value === 'string') out.print(value);
  else out.print(JSON.stringify(value, null, compact ? 0 : 2) ?? '');
}

function parseArgsJson(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (e) {
    throw new UsageError(`--args is not valid JSON: ${(e as Error).message.replace(/\s+/g, ' ').slice(0, 160)}`);
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new UsageError(`--args must be a JSON object like '{"name":"value"}'`);
  return args as Record<string, unknown>;
}

export async function callCommand(
  c: Common,
  toolName: string,
  opts: { arg?: string[]; args?: string; stream?: boolean },
): Promise<number> {
  const baseArgs = parseArgsJson(opts.args);
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('Interrupted'));
  process.once('SIGINT', onSigint);
  try {
    const { value: code } = await withClient(
      c,
      async (client, results) => {
        const tool = await findTool(client, toolName);
        const failure = sourceFailure(results);
        // The tool probably lived in the source that failed: say that rather than "not found".
        if (!tool && failure) throw failure;
        const args = parseArgPairs(opts.arg ?? [], tool, baseArgs);
        const onProgress = c.out.json
          ? undefined
          : (p: { progress: number; total?: number; message?: string }) =>
              c.out.info(
                dim(c.out, `… ${p.progress}${p.total ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`),
              );
        const name = tool?.name ?? toolName;
        const notice = slowCallNotice(c.out, name);
        try {
          if (opts.stream) {
            for await (const item of client.callToolStreaming(name, args, { signal: controller.signal, onProgress })) {
              notice.stop();
              printResult(c.out, item, true);
            }
          } else {
            const result = await client.callTool(name, args, { signal: controller.signal, onProgress });
            notice.stop();
            printResult(c.out, result);
          }
          return EXIT.OK;
        } catch (error) {
          notice.stop();
          if (c.out.json) printJsonError(c.out, error, EXIT.FAILED);
          c.out.info(formatError(c.out, error));
          return EXIT.FAILED;
        }
      },
      { searches: false },
    );
    return code;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

/**
 * Whether a required variable will resolve: from the environment (and ./.env), or from the config's `variables`.
 * A config value that is exactly `${NAME}` remaps to NAME, so it is set only when NAME is.
 */
function variableState(
  name: string,
  configured: Record<string, string>,
  env: Record<string, string | undefined>,
): { name: string; set: boolean; from?: string } {
  if (Object.prototype.hasOwnProperty.call(configured, name)) {
    const remap = /^\$\{([A-Za-z0-9_]+)\}$/.exec(configured[name]);
    if (!remap) return { name, set: true };
    return { name, set: Boolean(env[remap[1]]), from: remap[1] };
  }
  return { name, set: Boolean(env[name]) };
}

export async function inspectCommand(c: Common): Promise<number> {
  const { value: report, failure } = await withClient(
    c,
    async (client, results, origins) => {
      const { existsSync, readFileSync } = await import('node:fs');
      const dotenvPath = resolve(c.cwd, '.env');
      const env: Record<string, string | undefined> = {
        ...(existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath, 'utf8')) : {}),
        ...process.env,
      };
      const manuals = [];
      for (const r of results) {
        const name = r.manualCallTemplate?.name ?? '(unnamed)';
        const vars = new Set<string>();
        for (const t of r.manual.tools)
          for (const v of await client.getRequiredVariablesForRegisteredTool(t.name).catch(() => [])) vars.add(v);
        manuals.push({
          name,
          type: r.manualCallTemplate?.call_template_type,
          source: origins.get(name),
          success: r.success,
          tools: r.manual.tools.length,
          errors: r.errors,
          warnings: r.warnings,
          variables: [...vars].map((v) => variableState(v, client.config.variables ?? {}, env)),
        });
      }
      return manuals;
    },
    { runWhenAllFailed: true, listsWarnings: true, searches: false },
  );
  const missing = report.some((m) => m.variables.some((v) => !v.set));
  const code = failure ? EXIT.SOURCE : missing ? EXIT.FAILED : EXIT.OK;
  if (c.out.json) {
    const missingError = missing
      ? {
          code: 'MISSING_VARIABLE',
          message: `Missing variable(s): ${[...new Set(report.flatMap((m) => m.variables.filter((v) => !v.set).map((v) => (v.from ? `${v.name} (from ${v.from})` : v.name))))].join(', ')}`,
          exit_code: EXIT.FAILED,
        }
      : undefined;
    const error = failure ? jsonError(failure, EXIT.SOURCE) : missingError;
    c.out.print(JSON.stringify(error ? { error, manuals: report } : report, null, 2));
  } else {
    for (const m of report) {
      c.out.print(
        `${m.success ? green(c.out, '✓') : red(c.out, '✗')} ${bold(c.out, m.name)} ${dim(c.out, `(${m.source ?? m.type})`)}  ${m.tools} tool(s)`,
      );
      for (const e of m.errors) c.out.print(`  ${red(c.out, 'error')}   ${e}`);
      for (const w of m.warnings) c.out.print(`  ${yellow(c.out, 'warning')} ${w}`);
      if (m.variables.length) {
        c.out.print(`  variables:`);
        for (const v of m.variables)
          c.out.print(
            `    ${v.set ? green(c.out, 'set    ') : yellow(c.out, 'missing')} ${v.name}${v.from ? dim(c.out, ` (from ${v.from})`) : ''}`,
          );
      }
    }
  }
  return code;
}

export async function convertCommand(
  c: Common,
  input: string,
  opts: { output?: string; name?: string; baseUrl?: string },
): Promise<number> {
  const { convertOpenApiDocument } = await import('../loaders/openapi/index.js');
  let text: string;
  let specUrl: string | undefined;
  if (/^https?:\/\//i.test(input)) {
    // The library's download path (utcp-kit/internal/http, loaded here: it brings undici): URL policy, redirects
    // re-checked per hop, size cap, proxy, deadline.
    const { createHttpDispatcher, fetchDocument } = await import('../internal-http.js');
    const dispatcher = createHttpDispatcher();
    try {
      const doc = await fetchDocument(input, {
        dispatcher,
        timeoutMs: c.timeoutMs ?? 30_000,
        maxBytes: DEFAULT_LIMITS.max_document_bytes,
        maxRedirects: DEFAULT_LIMITS.max_redirects,
        context: 'OpenAPI spec',
        what: 'Download of the OpenAPI spec',
        headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' },
      });
      text = Buffer.from(doc.bytes).toString('utf8');
      specUrl = doc.url.href;
    } catch (cause) {
      throw new SourceError(`Cannot download ${input}: ${(cause as Error).message}`, [], { cause });
    } finally {
      await dispatcher.destroy();
    }
  } else {
    const { readFile } = await import('node:fs/promises');
    text = await readFile(resolve(c.cwd, input), 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new SourceError(
        e.code === 'ENOENT' ? `No such file: ${input}` : `Cannot read ${input}: ${e.code ?? e.message}`,
        [],
        { cause: e },
      );
    });
  }
  const t0 = performance.now();
  if (process.stderr.isTTY && text.length > 1_000_000)
    c.out.info(dim(c.out, `Converting ${(text.length / 2 ** 20).toFixed(1)} MB…`));
  const { manual, report } = await convertOpenApiDocument(text, {
    manualName: opts.name ?? 'openapi',
    specUrl,
    baseUrl: opts.baseUrl ?? null,
  }).catch((cause: Error) => {
    throw new SourceError(`Cannot convert ${input}: ${cause.message}`, [], { cause });
  });
  const ms = performance.now() - t0;
  const body = JSON.stringify(manual, null, 2) + '\n';
  if (opts.output) {
    const target = resolve(c.cwd, opts.output);
    await writeFile(target, body).catch((error: NodeJS.ErrnoException) => {
      // The system's words name neither the option nor what to do (ENOENT: no such file or directory, open …).
      const why =
        error.code === 'ENOENT'
          ? `the directory ${dirname(target)} does not exist`
          : error.code === 'EACCES' || error.code === 'EPERM'
            ? 'permission denied'
            : error.code === 'EISDIR'
              ? 'it is a directory'
              : error.message;
      throw new UsageError(`-o ${opts.output}: cannot write ${target}: ${why}`);
    });
  } else process.stdout.write(body);
  const tools = (manual as { tools: unknown[] }).tools.length;
  if (c.out.json && opts.output) c.out.print(JSON.stringify({ output: opts.output, tools, report }, null, 2));
  else {
    const n = report.counts;
    c.out.info(
      `${green(c.out, '✓')} OpenAPI ${report.specVersion}: ${n.tools} tool(s) from ${n.operations} operation(s), ${n.skipped} skipped, ${n.filtered} filtered, in ${ms.toFixed(0)} ms${opts.output ? ` → ${opts.output}` : ''}`,
    );
    for (const w of report.warnings) c.out.info(`  ${yellow(c.out, 'warning')} ${w}`);
  }
  return EXIT.OK;
}
