/**
 * The Postgres tool repository next to the in-memory one: registration (saveManual) and search p50 at 100,000 tools
 * on PGlite (in-process) and on a real PostgreSQL server (started here with initdb + pg_ctl, as the tests do),
 * bulk insert of 10,000 tools, and how fast a second client sees a registration (NOTIFY → search).
 * Run alone: node --import tsx bench/postgres.ts [--quick] [--only=bulk|100k]   (prints the rows and a markdown table)
 */
import { fileURLToPath } from 'node:url';
import type { ToolRepository } from '../src/core/repository.js';
import type { Tool, UtcpManual } from '../src/core/types.js';
import { Bm25Search } from '../src/repository/bm25-search.js';
import { InMemoryToolRepository } from '../src/repository/in-memory-repository.js';
import { PostgresToolRepository } from '../src/repository/postgres/postgres-repository.js';
import { startPglite } from '../test/helpers/pglite.js';
import { startPostgres } from '../test/helpers/postgres-server.js';
import { fmt, stats, type Row } from './lib.js';
import { syntheticManual } from './search.js';

const QUERIES = [
  'create a refund for this customer payment',
  'list open pull request reviews',
  'weather forecast',
  'export invoice report',
  'delete the cache queue topic',
];

/** `variant` changes every description, so saving variant 2 over variant 1 rewrites every row. */
function manualOf(n: number, prefix: string, variant = 1): UtcpManual {
  const m = syntheticManual(n) as unknown as UtcpManual;
  for (const t of m.tools as Tool[]) {
    t.name = `${prefix}.${t.name}`;
    if (variant !== 1) t.description = `${t.description} (variant ${variant})`;
  }
  return m;
}

async function measureRepo(
  subject: string,
  make: () => Promise<ToolRepository & { close?(): Promise<void> }>,
  n: number,
  rounds: number,
  rows: Row[],
  note?: string,
) {
  const repo = await make();
  try {
    await repo.open?.();
    const template = { name: 'bench', call_template_type: 'text' };
    // The first save, then replacements by a changed manual (every row rewritten, the old ones deleted); the searches
    // start right after the last save returns (a VACUUM started by it may still run: see
    // docs/design/repository-postgres.md#maintenance).
    const replacements = rounds >= 10 ? 3 : 1;
    const reg: number[] = [];
    for (let i = 0; i <= replacements; i++) {
      const manual = manualOf(n, 'bench', 1 + (i % 2));
      const t0 = performance.now();
      await repo.saveManual('bench', template, manual);
      reg.push(performance.now() - t0);
    }
    const [first, ...replaced] = reg;
    rows.push({
      suite: 'postgres',
      case: `register ${n} tools (saveManual), first save`,
      subject,
      unit: 'ms',
      value: first,
      rounds: 1,
      note,
    });
    const r = stats(replaced);
    rows.push({
      suite: 'postgres',
      case: `register ${n} tools, replacing a changed manual`,
      subject,
      unit: 'ms',
      value: r.median,
      p90: r.p90,
      rounds: r.rounds,
      note,
    });
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
      for (const q of QUERIES) {
        const t0 = performance.now();
        const hits = await repo.searchTools(q, { limit: 10 });
        samples.push(performance.now() - t0);
        if (hits.length === 0) throw new Error(`${subject}: no hit for ${q}`);
      }
    }
    const s = stats(samples);
    rows.push({
      suite: 'postgres',
      case: `search p50, ${n} tools, limit 10, after ${replacements} replacement${replacements > 1 ? 's' : ''}`,
      subject,
      unit: 'ms',
      value: s.median,
      p90: s.p90,
      rounds: s.rounds,
      note,
    });
  } finally {
    await repo.close?.();
  }
}

/**
 * Bulk insert of 10,000 tools (the issue's target: well under a second): first saves (each into a new schema),
 * saves replacing the manual by a changed one (each deletes the previous 10,000 rows and inserts 10,000 new ones),
 * and saves of an unchanged manual (a refresh: the stored rows are kept).
 */
async function measureBulk(
  subject: string,
  make: (schema: string) => Promise<PostgresToolRepository>,
  rounds: number,
  rows: Row[],
  note?: string,
) {
  const manuals = [manualOf(10_000, 'ten', 1), manualOf(10_000, 'ten', 2)];
  const template = { name: 'ten', call_template_type: 'text' };
  const firsts: number[] = [];
  const replaces: number[] = [];
  const refreshes: number[] = [];
  const save = async (repo: PostgresToolRepository, manual: UtcpManual, into: number[]) => {
    const t0 = performance.now();
    await repo.saveManual('ten', template, manual);
    into.push(performance.now() - t0);
  };
  for (let i = 0; i < Math.max(3, Math.ceil(rounds / 2)); i++) {
    const repo = await make(`b10k_${i}`);
    try {
      await repo.open();
      await save(repo, manuals[0], firsts);
      for (let j = 1; j <= 2; j++) {
        await save(repo, manuals[j % 2], replaces);
        await save(repo, manuals[j % 2], refreshes);
      }
    } finally {
      await repo.close();
    }
  }
  for (const [label, samples] of [
    ['first save', firsts],
    ['replacing a changed manual', replaces],
    ['saving it unchanged (refresh)', refreshes],
  ] as const) {
    const s = stats(samples);
    rows.push({
      suite: 'postgres',
      case: `register 10000 tools, ${label}`,
      subject,
      unit: 'ms',
      value: s.median,
      p90: s.p90,
      rounds: s.rounds,
      target: '< 1000 ms',
      met: s.median < 1000,
      note,
    });
  }
}

/** `only`: 'bulk' runs only the 10,000-tool saves (side by side on both engines), '100k' only the 100k rows. */
export async function benchPostgres({ quick, only }: { quick: boolean; only?: 'bulk' | '100k' }): Promise<Row[]> {
  const rows: Row[] = [];
  // Each row is printed as soon as it is measured (a 100k-tool run takes minutes).
  const push = rows.push.bind(rows);
  rows.push = (...r: Row[]) => {
    for (const x of r)
      process.stderr.write(
        `  ${x.case} | ${x.subject} | ${fmt(x.value)} ${x.unit}${x.p90 !== undefined ? ` (p90 ${fmt(x.p90)})` : ''}\n`,
      );
    return push(...r);
  };
  const n = 100_000;
  const rounds = quick ? 3 : 10;
  const big = only !== 'bulk';
  const small = only !== '100k';
  if (big)
    await measureRepo('in-memory (BM25)', async () => new InMemoryToolRepository(new Bm25Search()), n, rounds, rows);
  if (big)
    await measureRepo(
      'PGlite (in-process)',
      async () => new PostgresToolRepository({ pglite: {}, listen: false }),
      n,
      rounds,
      rows,
      'in-memory PGlite; first start not included',
    );
  const pglite = small ? await startPglite() : undefined;
  if (pglite)
    try {
      await measureBulk(
        'PGlite (in-process)',
        async (schema) => new PostgresToolRepository({ pglite: { instance: pglite as never }, schema, listen: false }),
        rounds,
        rows,
      );
    } finally {
      await pglite.close();
    }
  const server = await startPostgres({ fsync: true });
  try {
    if (big)
      await measureRepo(
        'PostgreSQL 127.0.0.1',
        async () => new PostgresToolRepository({ connectionString: server.url, schema: 'b100k', listen: false }),
        n,
        rounds,
        rows,
        'local server, default settings (fsync on)',
      );

    if (small)
      await measureBulk(
        'PostgreSQL 127.0.0.1',
        async (schema) => new PostgresToolRepository({ connectionString: server.url, schema, listen: false }),
        rounds,
        rows,
        'fsync on',
      );

    if (only) return rows;
    // A second repository sees a registration: from saveManual's commit to its NOTIFY event and a search that finds the tool.
    const a = new PostgresToolRepository({ connectionString: server.url, schema: 'bshare' });
    const b = new PostgresToolRepository({ connectionString: server.url, schema: 'bshare' });
    await a.open();
    await b.open();
    const lat: number[] = [];
    for (let i = 0; i < rounds; i++) {
      const name = `m${i}`;
      const seen = new Promise<number>((resolve) => {
        const off = b.subscribe((e) => {
          if (e.kind === 'saved' && e.manualName === name) {
            off();
            resolve(performance.now());
          }
        });
      });
      const m = manualOf(200, name);
      await a.saveManual(name, { name, call_template_type: 'text' }, m);
      const committed = performance.now();
      await seen;
      const hits = await b.searchTools('refund customer payment', { limit: 1 });
      if (!hits.length) throw new Error('no hit after the event');
      lat.push(performance.now() - committed);
    }
    await a.close();
    await b.close();
    const l = stats(lat);
    rows.push({
      suite: 'postgres',
      case: 'other client: commit → event → search',
      subject: 'PostgreSQL 127.0.0.1',
      unit: 'ms',
      value: l.median,
      p90: l.p90,
      rounds: l.rounds,
      target: '< 1000 ms',
      met: l.median < 1000,
    });
  } finally {
    await server.stop();
  }
  return rows;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const only = process.argv.find((a) => a.startsWith('--only='))?.slice(7);
  if (only !== undefined && only !== 'bulk' && only !== '100k') throw new Error('--only= takes bulk or 100k');
  const rows = await benchPostgres({ quick: process.argv.includes('--quick'), only });
  console.log('| case | subject | median | p90 | rounds | note |\n| --- | --- | ---: | ---: | ---: | --- |');
  for (const r of rows)
    console.log(
      `| ${r.case} | ${r.subject} | ${fmt(r.value)} ${r.unit} | ${r.p90 !== undefined ? fmt(r.p90) + ' ' + r.unit : ''} | ${r.rounds ?? ''} | ${[r.target ? `target ${r.target}: ${r.met ? 'met' : 'missed'}` : '', r.note ?? ''].filter(Boolean).join('; ')} |`,
    );
}
