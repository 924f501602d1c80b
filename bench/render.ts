/**
 * `npm run bench:report`: re-renders docs/benchmarks.md and docs/benchmarks.svg from bench/results/latest.json
 * (no measuring), exactly as `npm run bench` writes them (bench/write-docs.ts).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type BenchResults, writeBenchmarkDocs } from './write-docs.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const results = JSON.parse(readFileSync(`${root}bench/results/latest.json`, 'utf8')) as BenchResults;
writeBenchmarkDocs(root, results);
process.stderr.write('Wrote docs/benchmarks.md and docs/benchmarks.svg\n');
