/**
 * Writes docs/benchmarks.md and docs/benchmarks.svg from one run's results. Both `npm run bench` (bench/run.ts) and
 * `npm run bench:report` (bench/render.ts) write through here, so the page comes out the same either way: the table,
 * the failed suites, then the hand-written notes of bench/benchmarks-notes.md (the Postgres section from
 * `--only=postgres` runs, profiles), whatever suites the run held, and the page run through the repository's
 * formatter. Nothing on the page is kept from the page before: edit the notes file, not the page.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Row } from './lib.js';
import { renderChart, renderMarkdown } from './report.js';

/** The heading of the hand-written section on the Postgres suite (it takes minutes, so it is run on its own). */
export const POSTGRES_SECTION = '## Postgres tool repository';

/** The hand-written part of the page, appended after the generated one. */
export const NOTES_FILE = fileURLToPath(new URL('./benchmarks-notes.md', import.meta.url));

export interface BenchResults {
  machine: Record<string, unknown>;
  rows: Row[];
  failures?: string[];
}

/** The page for `results`, followed by the hand-written `notes`. */
export function benchmarksPage(results: BenchResults, notes: string): string {
  const failures = results.failures ?? [];
  return (
    renderMarkdown(results) +
    (failures.length ? `\n## Suites that failed in this run\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : '') +
    (notes ? `\n${notes}` : '')
  );
}

/** Writes `<root>docs/benchmarks.md` and `.svg` for `results`; `root` ends with a slash. */
export function writeBenchmarkDocs(root: string, results: BenchResults): void {
  mkdirSync(`${root}docs`, { recursive: true });
  const page = benchmarksPage(results, readFileSync(NOTES_FILE, 'utf8'));
  writeFileSync(`${root}docs/benchmarks.md`, formatted(page));
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
