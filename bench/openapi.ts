/**
 * OpenAPI → tools conversion of the GitHub REST spec (@octokit/openapi, ~1,200 operations, ~13 MB):
 * utcp-kit vs the official converter (`OpenApiConverter` of @utcp/http) vs @samchon/openapi
 * (`OpenApi.convert` + `HttpLlm.application`). Every converter gets its own parsed copy of the spec
 * (made outside the timed section), one warm-up run, then timed rounds; medians are compared.
 *
 * Run alone: `node --import tsx bench/openapi.ts [--rounds=N] [--official-rounds=N] [--skip-official] [--skip-samchon]`.
 * Not part of `npm test`.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openapiKit } from './kit.js';

const { convertOpenApiDocument } = openapiKit;
import { fmt, machine, stats, type Stats } from './lib.js';

export interface BenchOpenApiOptions {
  /** Timed rounds for utcp-kit and samchon. @default 7 */
  rounds?: number;
  /** Timed rounds for the official converter (~15 s per run). @default 2 */
  officialRounds?: number;
  skipOfficial?: boolean;
  skipSamchon?: boolean;
  /** Spec file. @default node_modules/@octokit/openapi/generated/api.github.com.json */
  specPath?: string;
}

export interface OpenApiBenchRow {
  subject: string;
  /** What is timed. */
  what: string;
  stats: Stats;
  /** Tools (functions) produced, and operations the converter reported as failed or dropped. */
  tools: number;
  failed?: number;
}

export interface OpenApiBenchResult {
  machine: ReturnType<typeof machine>;
  spec: { file: string; bytes: number; operations: number };
  rows: OpenApiBenchRow[];
  /** Official median ÷ utcp-kit median, samchon median ÷ utcp-kit median (from parsed objects). */
  speedup: { official?: number; samchon?: number };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

function defaultSpecPath(): string {
  const require = createRequire(import.meta.url);
  return join(require.resolve('@octokit/openapi/package.json'), '..', 'generated', 'api.github.com.json');
}

/** Times `run(input)` where each round gets a fresh input from `prepare()` (prepared untimed). */
async function timed<I, R>(
  prepare: () => I,
  run: (input: I) => R | Promise<R>,
  rounds: number,
): Promise<{ stats: Stats; last: R }> {
  let last = await run(prepare()); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const input = prepare();
    const t0 = performance.now();
    last = await run(input);
    samples.push(performance.now() - t0);
  }
  return { stats: stats(samples), last };
}

/** Runs the comparison and returns medians; prints nothing. */
export async function benchOpenApi(options: BenchOpenApiOptions = {}): Promise<OpenApiBenchResult> {
  const rounds = Math.max(5, options.rounds ?? 7);
  const officialRounds = Math.max(1, options.officialRounds ?? 2);
  const file = options.specPath ?? defaultSpecPath();
  const text = readFileSync(file, 'utf8');
  const parse = () => JSON.parse(text) as Record<string, unknown>;
  const spec = parse();
  let operations = 0;
  for (const item of Object.values(spec.paths as Record<string, Record<string, unknown>>)) {
    operations += Object.keys(item).filter((k) => METHODS.includes(k)).length;
  }
  const specUrl = 'https://raw.githubusercontent.com/github/rest-api-description/main/api.github.com.json';
  const rows: OpenApiBenchRow[] = [];

  // utcp-kit never mutates its input, so it may share one parsed object across rounds.
  const ours = await timed(
    () => spec,
    (doc) => convertOpenApiDocument(doc, { manualName: 'github', specUrl }),
    rounds,
  );
  rows.push({
    subject: 'utcp-kit',
    what: 'parsed object → manual',
    stats: ours.stats,
    tools: ours.last.report.counts.tools,
    failed: ours.last.report.counts.skipped,
  });
  const oursText = await timed(
    () => text,
    (t) => convertOpenApiDocument(t, { manualName: 'github', specUrl }),
    rounds,
  );
  rows.push({
    subject: 'utcp-kit',
    what: 'JSON text → manual (incl. parse)',
    stats: oursText.stats,
    tools: oursText.last.report.counts.tools,
  });

  if (!options.skipSamchon) {
    const { OpenApi, HttpLlm } = await import('@samchon/openapi');
    const s = await timed(parse, (doc) => HttpLlm.application({ document: OpenApi.convert(doc as never) }), rounds);
    rows.push({
      subject: '@samchon/openapi',
      what: 'parsed object → OpenApi.convert + HttpLlm.application',
      stats: s.stats,
      tools: s.last.functions.length,
      failed: s.last.errors.length,
    });
  }

  if (!options.skipOfficial) {
    const { OpenApiConverter } = await import('@utcp/http');
    const o = await timed(
      parse,
      (doc) => new OpenApiConverter(doc, { specUrl, callTemplateName: 'github' }).convert(),
      officialRounds,
    );
    rows.push({
      subject: '@utcp/http (official)',
      what: 'parsed object → OpenApiConverter.convert',
      stats: o.stats,
      tools: o.last.tools.length,
    });
  }

  const median = (subject: string) => rows.find((r) => r.subject === subject)?.stats.median;
  const base = ours.stats.median;
  const official = median('@utcp/http (official)');
  const samchon = median('@samchon/openapi');
  return {
    machine: machine(),
    spec: { file, bytes: Buffer.byteLength(text), operations },
    rows,
    speedup: {
      official: official !== undefined ? official / base : undefined,
      samchon: samchon !== undefined ? samchon / base : undefined,
    },
  };
}

/** Renders the result as a plain-text table. */
export function formatOpenApiBench(result: OpenApiBenchResult): string {
  const lines = [
    `GitHub REST spec: ${(result.spec.bytes / 1e6).toFixed(1)} MB, ${result.spec.operations} operations (${result.machine.node}, ${result.machine.cpus})`,
    '',
    `${'subject'.padEnd(24)} ${'median ms'.padStart(10)} ${'min ms'.padStart(9)} ${'rounds'.padStart(6)} ${'tools'.padStart(6)} ${'failed'.padStart(6)}  timed`,
  ];
  for (const r of result.rows) {
    lines.push(
      `${r.subject.padEnd(24)} ${fmt(r.stats.median).padStart(10)} ${fmt(r.stats.min).padStart(9)} ${String(r.stats.rounds).padStart(6)} ${String(r.tools).padStart(6)} ${String(r.failed ?? '-').padStart(6)}  ${r.what}`,
    );
  }
  const { official, samchon } = result.speedup;
  lines.push('');
  if (official !== undefined) lines.push(`utcp-kit is ${official.toFixed(1)}× faster than the official converter`);
  if (samchon !== undefined) lines.push(`utcp-kit is ${samchon.toFixed(1)}× faster than @samchon/openapi`);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const result = await benchOpenApi({
    rounds: arg('rounds') ? Number(arg('rounds')) : undefined,
    officialRounds: arg('official-rounds') ? Number(arg('official-rounds')) : undefined,
    skipOfficial: process.argv.includes('--skip-official'),
    skipSamchon: process.argv.includes('--skip-samchon'),
  });
  console.log(formatOpenApiBench(result));
}
