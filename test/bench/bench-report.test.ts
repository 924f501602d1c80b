/**
 * `npm run bench:report` re-renders docs/benchmarks.md from bench/results/latest.json the way `npm run bench` writes
 * it (bench/write-docs.ts): the hand-written notes (bench/benchmarks-notes.md) appended, the tables formatted. Rendering
 * the checked-in results must therefore give the checked-in page back unchanged.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { POSTGRES_SECTION, type BenchResults, writeBenchmarkDocs } from '../../bench/write-docs.js';

const ROOT = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'utcp-bench-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bench:report', () => {
  it('gives back the checked-in docs/benchmarks.md: Postgres section kept, tables formatted', () => {
    mkdirSync(join(dir, 'docs'), { recursive: true });
    const results = JSON.parse(readFileSync(join(ROOT, 'bench/results/latest.json'), 'utf8')) as BenchResults;
    writeBenchmarkDocs(`${dir}/`, results);
    const page = readFileSync(join(dir, 'docs/benchmarks.md'), 'utf8');
    expect(page).toContain(POSTGRES_SECTION);
    expect(page).toEqual(readFileSync(join(ROOT, 'docs/benchmarks.md'), 'utf8'));
  }, 30_000);

  it('keeps the hand-written notes when the run measured Postgres too, whatever the page held before', () => {
    const root = join(dir, 'with-postgres');
    mkdirSync(join(root, 'docs'), { recursive: true });
    writeFileSync(join(root, 'docs/benchmarks.md'), '# Benchmarks\n\nan old page without notes\n');
    const results: BenchResults = {
      machine: { cpus: '2 × test', memoryGiB: 1, platform: 'linux x64', node: 'v20', date: '2026-11-28' },
      rows: [
        { suite: 'postgres', case: 'register 10000 tools, first save', subject: 'PGlite', unit: 'ms', value: 600 },
      ],
    };
    writeBenchmarkDocs(`${root}/`, results);
    const page = readFileSync(join(root, 'docs/benchmarks.md'), 'utf8');
    expect(page).toContain('register 10000 tools, first save');
    expect(page).toContain(POSTGRES_SECTION);
    expect(page).not.toContain('an old page');
  }, 30_000);
});
