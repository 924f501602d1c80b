/** Re-renders docs/benchmarks.md and docs/benchmarks.svg from bench/results/latest.json (no measuring). */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderChart, renderMarkdown } from './report.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const results = JSON.parse(readFileSync(`${root}bench/results/latest.json`, 'utf8'));
const failures: string[] = results.failures ?? [];
writeFileSync(
  `${root}docs/benchmarks.md`,
  renderMarkdown(results) +
    (failures.length ? `\n## Suites that failed in this run\n\n${failures.map((f) => `- ${f}`).join('\n')}\n` : ''),
);
writeFileSync(`${root}docs/benchmarks.svg`, renderChart(results.rows));
process.stderr.write('Wrote docs/benchmarks.md and docs/benchmarks.svg\n');
