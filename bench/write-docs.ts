/**
 * Writes docs/benchmarks.md and docs/benchmarks.svg from one run's results. Both `npm run bench` (bench/run.ts) and
 * `npm run bench:report` (bench/render.ts) write through here, so the page comes out the same either way: the failed
 * suites listed, the hand-written Postgres section kept when the results hold no Postgres rows, and the page run
 * through the repository's formatter.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Row } from './lib.js';
import { renderChart, renderMarkdown } from './report.js';

/** The heading of the section written by hand from `--only=postgres` runs (the suite takes minutes). */
export const POSTGRES_SECTION = '## Postgres tool repository';

export interface BenchResults {
  machine: Record<string, unknown>;
  rows: Row[];
  failures?: string[];
}

/** The page for `results`, keeping the Postgres section of `previous` (the page as it was) when `results` has none. */
export function benchmarksPage(results: BenchResults, previous: string): string {
  const failures = results.failures ?? [];
  const kept = previous.indexOf(POSTGRES_SECTION);
  return (
    renderMarkdown(results) +
    (failures.length ? `\n## Suites that failed in this run\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : '') +
    (kept >= 0 && !results.rows.some((r) => r.suite === 'postgres') ? `\n${previous.slice(kept)}` : '')
  );
}

/** Writes `<root>docs/benchmarks.md` and `.svg` for `results`; `root` ends with a slash. */
export function writeBenchmarkDocs(root: string, results: BenchResults): void {
  mkdirSync(`${root}docs`, { recursive: true });
  const docPath = `${root}docs/benchmarks.md`;
  const previous = existsSync(docPath) ? readFileSync(docPath, 'utf8') : '';
  writeFileSync(docPath, formatted(benchmarksPage(results, previous)));
  writeFileSync(`${root}docs/benchmarks.svg`, renderChart(results.rows));
}

/**
 * The page as the repository's formatter prints it (it pads the tables), so `npm run format:check` stays green:
 * Biome reads it from stdin under this repository's settings, wherever the page is written.
 */
function formatted(page: string): string {
  const repo = fileURLToPath(new URL('..', import.meta.url));
  const biome = createRequire(import.meta.url).resolve('@biomejs/biome/bin/biome');
  return execFileSync(process.execPath, [biome, 'format', '--stdin-file-path=docs/benchmarks.md'], {
    cwd: repo,
    input: page,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    timeout: 20_000,
  });
}
