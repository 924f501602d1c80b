/**
 * `npm run bench`: every suite side by side with its peers in one run, written to
 * bench/results/latest.json and docs/benchmarks.md (+ docs/benchmarks.svg).
 * Flags: --quick (fewer rounds), --only=<suite,...> (search, http, openapi, mcp, cli, import, postgres, tracing,
 * bridge-scale, code-mode, install),
 * --write-docs (with --only: still render docs/benchmarks.md from the suites run).
 * Environment: BENCH_EXTRA_NODE=<path of another node binary> adds the cold 10,000-tool registration run by it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fmt, machine, type Row } from './lib.js';
import { writeBenchmarkDocs } from './write-docs.js';

const quick = process.argv.includes('--quick');
const only = process.argv
  .find((a) => a.startsWith('--only='))
  ?.slice(7)
  .split(',');

/** Suite name → [module, exported function]. Modules load one at a time, so one suite's imports never skew another. */
const suites: Record<string, [string, string]> = {
  search: ['./search.ts', 'benchSearch'],
  http: ['./http.ts', 'benchHttp'],
  openapi: ['./openapi-rows.ts', 'benchOpenApiRows'],
  mcp: ['./mcp.ts', 'benchMcp'],
  cli: ['./cli.ts', 'benchCli'],
  import: ['./cli.ts', 'benchImport'],
  postgres: ['./postgres.ts', 'benchPostgres'],
  tracing: ['./tracing.ts', 'benchTracing'],
  'bridge-scale': ['./bridge-scale.ts', 'benchBridgeScale'],
  'code-mode': ['./code-mode.ts', 'benchCodeMode'],
  install: ['./install.ts', 'benchInstall'],
};

const loadAtStart = machine().loadAverage;
const rows: Row[] = [];
const failures: string[] = [];
for (const [name, [file, fn]] of Object.entries(suites)) {
  if (only && !only.includes(name)) continue;
  process.stderr.write(`• ${name}…\n`);
  try {
    const mod = (await import(new URL(file, import.meta.url).href)) as Record<
      string,
      (o: { quick: boolean }) => Promise<Row[]>
    >;
    const got = await mod[fn]({ quick });
    rows.push(...got);
    for (const r of got)
      process.stderr.write(
        `  ${r.case.padEnd(30)} ${r.subject.padEnd(22)} ${fmt(r.value).padStart(10)} ${r.unit}${r.ratio !== undefined ? `  ${r.ratio.toFixed(2)}× vs ${r.vs}` : ''}${r.target ? `  ${r.met ? 'met' : 'MISSED'}: ${r.target}` : ''}\n`,
      );
  } catch (error) {
    failures.push(`${name}: ${(error as Error).message}`);
    process.stderr.write(`  failed: ${(error as Error).stack}\n`);
  }
}

const results = { machine: { ...machine(), loadAtStart }, quick, rows, failures };
const root = fileURLToPath(new URL('..', import.meta.url));
mkdirSync(`${root}bench/results`, { recursive: true });
writeFileSync(`${root}bench/results/latest.json`, JSON.stringify(results, null, 2) + '\n');
// The PostgreSQL suite takes minutes; `--write-docs` renders the other suites' table without it. The hand-written
// notes (bench/benchmarks-notes.md) are appended either way.
const writeDocs = !only || process.argv.includes('--write-docs');
if (writeDocs) writeBenchmarkDocs(root, results);
process.stderr.write(
  `\nWrote bench/results/latest.json${writeDocs ? ', docs/benchmarks.md and docs/benchmarks.svg' : ''}\n`,
);
if (failures.length) process.exitCode = 1;
