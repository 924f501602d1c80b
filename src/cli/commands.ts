/** The `utcp` subcommands: tools, search, call, convert, inspect. */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { RegisterManualResult, Tool, UtcpClient } from '../index.js';
import { ToolNotFoundError, parseDotenv } from '../index.js';
import { bold, cyan, dim, formatError, green, red, table, yellow, type Out } from './output.js';
import { createCliClient } from './sources.js';

/** Exit codes: documented in `utcp --help`. */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, SOURCE: 3 } as const;

export class UsageError extends Error {}

export interface Common {
  out: Out;
  cwd: string;
  sources: string[];
  config?: string;
  timeoutMs?: number;
  baseUrl?: string;
  name?: string;
}

function firstLine(s: string, max = 100): string {
  const line = (s ?? '').split('\n')[0].trim();
  return line.length > max ? line.slice(0, max - 1) + '…' : line;
}

function reportRegistration(out: Out, r: RegisterManualResult): void {
  if (out.json) return;
  const name = r.manualCallTemplate?.name ?? '(unnamed)';
  if (!r.success) out.info(`${red(out, '✗')} ${name}: ${r.errors.join('; ')}`);
  else if (r.warnings.length) out.info(dim(out, `${name}: ${r.warnings.length} warning(s); \`utcp inspect\` lists them`));
}

/** Builds the client, reporting each manual; returns the exit code to use when a manual failed. */
async function withClient<T>(c: Common, run: (client: UtcpClient, results: RegisterManualResult[]) => Promise<T>): Promise<{ value: T; failed: boolean }> {
  const { client, results } = await createCliClient({ cwd: c.cwd, sources: c.sources, configPath: c.config, timeoutMs: c.timeoutMs, baseUrl: c.baseUrl, name: c.name, onResult: (r) => reportRegistration(c.out, r) });
  try {
    if (results.length === 0) throw new UsageError('No tools to work with: name a source (a manual or OpenAPI file or URL, a config, or mcp:<command>) or add a utcp.config.json here');
    return { value: await run(client, results), failed: results.some((r) => !r.success) };
  } finally {
    await client.close();
  }
}

function toolRow(out: Out, t: Tool): string[] {
  return [cyan(out, t.name), firstLine(t.description), dim(out, t.tags.join(','))];
}

function toolJson(t: Tool) {
  return { name: t.name, description: t.description, tags: t.tags, inputs: t.inputs, call_template_type: t.tool_call_template.call_template_type };
}

export async function toolsCommand(c: Common, opts: { tag?: string[] }): Promise<number> {
  const { value: tools, failed } = await withClient(c, async (client) => {
    const all = await client.getTools();
    if (!opts.tag?.length) return all;
    const tags = new Set(opts.tag.map((t) => t.toLowerCase()));
    return all.filter((t) => t.tags.some((x) => tags.has(x.toLowerCase())));
  });
  if (c.out.json) c.out.print(JSON.stringify(tools.map(toolJson), null, 2));
  else {
    c.out.print(table([[bold(c.out, 'TOOL'), bold(c.out, 'DESCRIPTION'), bold(c.out, 'TAGS')], ...tools.map((t) => toolRow(c.out, t))]));
    c.out.info(dim(c.out, `${tools.length} tool(s)`));
  }
  return failed ? EXIT.SOURCE : EXIT.OK;
}

export async function searchCommand(c: Common, query: string, opts: { limit: number; tag?: string[] }): Promise<number> {
  const { value: hits, failed } = await withClient(c, (client) => client.searchTools(query, { limit: opts.limit, anyOfTagsRequired: opts.tag ?? null }));
  if (c.out.json) c.out.print(JSON.stringify(hits.map(toolJson), null, 2));
  else if (hits.length === 0) c.out.info(`No tool matches "${query}"`);
  else c.out.print(table(hits.map((t, i) => [dim(c.out, `${i + 1}.`), ...toolRow(c.out, t)])));
  return failed ? EXIT.SOURCE : EXIT.OK;
}

/** Parses `--arg k=v` values: JSON when the tool's schema wants a non-string (or the value is JSON), else the string. */
export function parseArgPairs(pairs: string[], tool: Tool | undefined): Record<string, unknown> {
  const props = ((tool?.inputs as { properties?: Record<string, { type?: unknown }> })?.properties ?? {}) as Record<string, { type?: unknown }>;
  const args: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new UsageError(`--arg expects name=value, got "${pair}"`);
    const key = pair.slice(0, eq);
    const raw = pair.slice(eq + 1);
    const type = props[key]?.type;
    const wantsString = type === 'string' || (Array.isArray(type) && type.includes('string') && type.length === 1);
    if (wantsString) args[key] = raw;
    else {
      try {
        args[key] = JSON.parse(raw);
      } catch {
        args[key] = raw;
      }
    }
  }
  return args;
}

async function findTool(client: UtcpClient, name: string): Promise<Tool> {
  const exact = await client.getTool(name);
  if (exact) return exact;
  const matches = (await client.getTools()).filter((t) => t.name.endsWith(`.${name}`));
  if (matches.length === 1) return matches[0];
  if (matches.length > 1) throw new UsageError(`"${name}" is ambiguous: ${matches.map((t) => t.name).join(', ')}`);
  throw new ToolNotFoundError(name);
}

function printResult(out: Out, value: unknown): void {
  if (value instanceof Uint8Array) process.stdout.write(value);
  else if (typeof value === 'string' && !out.json) out.print(value);
  else out.print(JSON.stringify(value, null, out.json ? 0 : 2));
}

export async function callCommand(c: Common, toolName: string, opts: { arg?: string[]; json?: string; stream?: boolean }): Promise<number> {
  const controller = new AbortController();
  const onSigint = () => controller.abort(new Error('Interrupted'));
  process.once('SIGINT', onSigint);
  try {
    const { value: code } = await withClient(c, async (client) => {
      const tool = await findTool(client, toolName);
      let args: Record<string, unknown> = {};
      if (opts.json) {
        try {
          args = JSON.parse(opts.json);
        } catch (e) {
          throw new UsageError(`--json is not valid JSON: ${(e as Error).message}`);
        }
        if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new UsageError('--json must be a JSON object');
      }
      Object.assign(args, parseArgPairs(opts.arg ?? [], tool));
      const onProgress = c.out.json ? undefined : (p: { progress: number; total?: number; message?: string }) =>
        c.out.info(dim(c.out, `… ${p.progress}${p.total ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`));
      try {
        if (opts.stream) {
          for await (const item of client.callToolStreaming(tool.name, args, { signal: controller.signal, onProgress })) printResult({ ...c.out, json: true }, item);
        } else {
          printResult(c.out, await client.callTool(tool.name, args, { signal: controller.signal, onProgress }));
        }
        return EXIT.OK;
      } catch (error) {
        c.out.info(formatError(c.out, error));
        return EXIT.FAILED;
      }
    });
    return code;
  } finally {
    process.off('SIGINT', onSigint);
  }
}

export async function inspectCommand(c: Common): Promise<number> {
  const { value: report } = await withClient(c, async (client, results) => {
    const { existsSync, readFileSync } = await import('node:fs');
    const dotenvPath = resolve(c.cwd, '.env');
    const env: Record<string, string | undefined> = { ...(existsSync(dotenvPath) ? parseDotenv(readFileSync(dotenvPath, 'utf8')) : {}), ...process.env };
    const manuals = [];
    for (const r of results) {
      const name = r.manualCallTemplate?.name ?? '(unnamed)';
      const vars = new Set<string>();
      for (const t of r.manual.tools) for (const v of await client.getRequiredVariablesForRegisteredTool(t.name).catch(() => [])) vars.add(v);
      manuals.push({
        name,
        type: r.manualCallTemplate?.call_template_type,
        success: r.success,
        tools: r.manual.tools.length,
        errors: r.errors,
        warnings: r.warnings,
        variables: [...vars].map((v) => ({ name: v, set: Boolean(env[v]) || Object.prototype.hasOwnProperty.call(client.config.variables ?? {}, v) })),
      });
    }
    return manuals;
  });
  if (c.out.json) c.out.print(JSON.stringify(report, null, 2));
  else {
    for (const m of report) {
      c.out.print(`${m.success ? green(c.out, '✓') : red(c.out, '✗')} ${bold(c.out, m.name)} ${dim(c.out, `(${m.type})`)}  ${m.tools} tool(s)`);
      for (const e of m.errors) c.out.print(`  ${red(c.out, 'error')}   ${e}`);
      for (const w of m.warnings) c.out.print(`  ${yellow(c.out, 'warning')} ${w}`);
      if (m.variables.length) {
        c.out.print(`  variables:`);
        for (const v of m.variables) c.out.print(`    ${v.set ? green(c.out, 'set    ') : yellow(c.out, 'missing')} ${v.name}`);
      }
    }
  }
  const bad = report.some((m) => !m.success);
  const missing = report.some((m) => m.variables.some((v) => !v.set));
  return bad ? EXIT.SOURCE : missing ? EXIT.FAILED : EXIT.OK;
}

export async function convertCommand(c: Common, input: string, opts: { output?: string; name?: string; baseUrl?: string }): Promise<number> {
  const { convertOpenApiDocument } = await import('../loaders/openapi/index.js');
  let text: string;
  let specUrl: string | undefined;
  if (/^https?:\/\//i.test(input)) {
    const { assertUrlAllowed } = await import('../index.js');
    assertUrlAllowed(input, 'OpenAPI spec');
    const res = await fetch(input, { signal: AbortSignal.timeout(c.timeoutMs ?? 30_000), redirect: 'follow' });
    if (!res.ok) throw new Error(`HTTP ${res.status} fetching ${input}`);
    text = await res.text();
    specUrl = res.url || input;
  } else {
    const { readFile } = await import('node:fs/promises');
    text = await readFile(resolve(c.cwd, input), 'utf8').catch((e: NodeJS.ErrnoException) => {
      throw new UsageError(`Cannot read ${input}: ${e.code ?? e.message}`);
    });
  }
  const t0 = performance.now();
  if (process.stderr.isTTY && text.length > 1_000_000) c.out.info(dim(c.out, `Converting ${(text.length / 2 ** 20).toFixed(1)} MB…`));
  const { manual, report } = await convertOpenApiDocument(text, { manualName: opts.name ?? 'openapi', specUrl, baseUrl: opts.baseUrl ?? null });
  const ms = performance.now() - t0;
  const body = JSON.stringify(manual, null, 2) + '\n';
  if (opts.output) await writeFile(resolve(c.cwd, opts.output), body);
  else process.stdout.write(body);
  const tools = (manual as { tools: unknown[] }).tools.length;
  if (c.out.json && opts.output) c.out.print(JSON.stringify({ output: opts.output, tools, report }, null, 2));
  else {
    const n = report.counts;
    c.out.info(`${green(c.out, '✓')} OpenAPI ${report.specVersion}: ${n.tools} tool(s) from ${n.operations} operation(s), ${n.skipped} skipped, ${n.filtered} filtered, in ${ms.toFixed(0)} ms${opts.output ? ` → ${opts.output}` : ''}`);
    for (const w of report.warnings) c.out.info(`  ${yellow(c.out, 'warning')} ${w}`);
  }
  return EXIT.OK;
}
