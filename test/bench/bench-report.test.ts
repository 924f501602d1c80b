/**
 * `npm run bench:report` re-renders docs/benchmarks.md from bench/results/latest.json the way `npm run bench` writes
 * it (bench/write-docs.ts): the hand-written Postgres section kept, the tables formatted. Rendering the checked-in
 * results next to the checked-in page must therefore give the page back unchanged.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_SECTION, type BenchResults, writeBenchmarkDocs } from '../../bench/write-docs.js';

const ROOT = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'utcp-bench-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bench:report', () => {
  it('gives back the checked-in docs/benchmarks.md: Postgres section kept, tables formatted', () => {
    mkdirSync(join(dir, 'docs'));
    copyFileSync(join(ROOT, 'docs/benchmarks.md'), join(dir, 'docs/benchmarks.md'));
    const results = JSON.parse(readFileSync(join(ROOT, 'bench/results/latest.json'), 'utf8')) as BenchResults;
    writeBenchmarkDocs(`${dir}/`, results);
    const page = readFileSync(join(dir, 'docs/benchmarks.md'), 'utf8');
    expect(page).toContain(POSTGRES_SECTION);
    expect(page).toEqual(readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8'));
  }, 30_000);
});
