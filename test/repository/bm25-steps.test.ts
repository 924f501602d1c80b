/**
 * A large registration's index built in steps (docs/design/manual-format.md#index-in-steps): the registration indexes
 * for `indexBudgetMs`, idle turns of the event loop go on, and the next search or change finishes what is left. The
 * ranking never depends on where the build was cut.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Tool } from '../../src/core/types.js';
import { UtcpValidationError } from '../../src/core/errors.js';
import { UtcpClient } from '../../src/index.js';
import { Bm25Search } from '../../src/repository/bm25-search.js';
import { SegmentBuild } from '../../src/repository/bm25-segment.js';
import { InMemoryToolRepository } from '../../src/repository/in-memory-repository.js';
import { ranking, tools } from './search-suite.js';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Lets the event loop run its timers `n` times (the idle steps are timers of 0 ms, due before this one's 1 ms). */
async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** Registrations, removals and searches in one order; the rankings seen after each step. */
function history(options: ConstructorParameters<typeof Bm25Search>[0]): string[][][] {
  const s = new Bm25Search(options);
  const seen: string[][][] = [];
  const big = tools(1500);
  const other = tools(1100, 'other ').map((t) => ({ ...t, name: t.name.replace('m.', 'o.') }));
  const third = tools(2000, 'third ').map((t) => ({ ...t, name: t.name.replace('m.', 't.') }));
  const small = tools(30, 'small ').map((t) => ({ ...t, name: t.name.replace('m.', 's.') }));
  s.add(big);
  s.add(small.slice(0, 10)); // queued behind the unfinished build
  seen.push(ranking(s));
  s.add(other);
  s.remove(other.slice(0, 100)); // removal while `other` may be unfinished
  s.add(third);
  s.add(small.slice(10));
  s.remove(big.slice(0, 1000)); // `big` mostly removed: rebuilt on the next search
  seen.push(ranking(s));
  s.add(big.slice(0, 1000)); // registered again, now after `third`
  seen.push(ranking(s));
  return seen;
}

describe('bm25 index built in steps', () => {
  it('ranks exactly as the index built at registration, wherever the build is cut', () => {
    const whole = history({ indexBudgetMs: Infinity });
    expect(whole.flat(2).length).toBeGreaterThan(100);
    // 0: every large build is left unfinished at add() and finished by the next call; 1 ms: cut somewhere inside.
    for (const indexBudgetMs of [0, 1, 25]) expect(history({ indexBudgetMs })).toEqual(whole);
    expect(history({})).toEqual(whole);
  });

  it('finishes an unfinished build in idle turns of the event loop, so the search after them builds nothing', async () => {
    const docs = tools(3000);
    const expected = ranking(oneGo(docs));
    const advance = vi.spyOn(SegmentBuild.prototype, 'advance');
    const finish = vi.spyOn(SegmentBuild.prototype, 'finish');
    const s = new Bm25Search({ indexBudgetMs: 0 });
    s.add(docs);
    expect(advance).toHaveBeenCalledTimes(1);
    expect(finish).not.toHaveBeenCalled();
    for (let i = 0; i < 2000 && finish.mock.calls.length === 0; i++) await turns(1);
    expect(finish).toHaveBeenCalledTimes(1);
    // Every step of the build had a deadline: none was the search's "finish it all".
    expect(advance.mock.calls.every(([deadline]) => Number.isFinite(deadline))).toBe(true);
    const steps = advance.mock.calls.length;
    expect(ranking(s)).toEqual(expected);
    expect(advance).toHaveBeenCalledTimes(steps);
    expect(finish).toHaveBeenCalledTimes(1);
  });

  it('runs the steps one after another while the process waits on one timer (an agent awaiting its model)', async () => {
    const finish = vi.spyOn(SegmentBuild.prototype, 'finish');
    const s = new Bm25Search({ indexBudgetMs: 0 });
    s.add(tools(20_000));
    // About 60 ms of steps on a quiet machine, in one wait of a second: with the steps on unref'd immediates, the
    // event loop slept in its poll until this timer and ran one or two of them.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(finish).toHaveBeenCalledTimes(1);
  });

  it('stops the idle steps on close(); a later search still finishes the build and sees every tool', async () => {
    const docs = tools(2000);
    const expected = ranking(oneGo(docs))[0];
    const advance = vi.spyOn(SegmentBuild.prototype, 'advance');
    const repo = new InMemoryToolRepository(new Bm25Search({ indexBudgetMs: 0 }));
    await repo.saveManual(
      'm',
      { call_template_type: 'text' },
      { utcp_version: '1.0.0', manual_version: '1', tools: docs },
    );
    expect(advance).toHaveBeenCalledTimes(1);
    await repo.close();
    await turns(20);
    expect(advance).toHaveBeenCalledTimes(1);
    const hits = await repo.searchTools('weather forecast', { limit: 20 });
    expect(hits.map((t) => t.name)).toEqual(expected);
    expect(advance).toHaveBeenCalledTimes(2);
  });

  it('never keeps a process alive: one that registers and exits leaves an unfinished build unfinished', () => {
    // The built package in a fresh process: a large registration with no budget, then the script ends. Its idle steps
    // (4 ms each) are unref'd: the process exits without waiting for the 20,000 tools to be indexed.
    const dist = (path: string) => JSON.stringify(new URL(`../../dist/${path}`, import.meta.url).href);
    const script = `
      const { Bm25Search } = await import(${dist('repository/bm25-search.js')});
      const { SegmentBuild } = await import(${dist('repository/bm25-segment.js')});
      let finished = false;
      const finish = SegmentBuild.prototype.finish;
      SegmentBuild.prototype.finish = function () { finished = true; return finish.call(this); };
      const tools = Array.from({ length: 20000 }, (_, i) => ({ name: 'm.tool_' + i, description: 'Tool number ' + i,
        tags: [], inputs: {}, outputs: {}, tool_call_template: { call_template_type: 'http' } }));
      new Bm25Search({ indexBudgetMs: 0 }).add(tools);
      process.on('exit', () => process.stdout.write(JSON.stringify({ finished })));
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(JSON.parse(out)).toEqual({ finished: false });
  });

  it('never throws from an idle step: a tool the writer cannot read fails the next search instead', async () => {
    const broken = tools(1500).map((t, i) => (i === 1401 ? ({ ...t, tags: undefined } as unknown as Tool) : t));
    // Built at once, the unreadable tool makes add() throw (1401: not among the tools sampled for the text length).
    expect(() => oneGo(broken)).toThrow(TypeError);
    const finish = vi.spyOn(SegmentBuild.prototype, 'finish');
    const s = new Bm25Search({ indexBudgetMs: 0 });
    s.add(broken);
    // The idle steps reach the tool and stop (an exception there would be uncaught: vitest fails the run on one).
    await turns(50);
    expect(finish).not.toHaveBeenCalled();
    expect(() => s.search('weather', 5)).toThrow(TypeError);
    // Not forgotten: the build stays unfinished, so the next search meets the error too rather than missing tools.
    expect(() => s.search('weather', 5)).toThrow(TypeError);
  });

  it('refuses a budget that is not a number of milliseconds ≥ 0, in code and in the client config', async () => {
    for (const bad of [-1, Number.NaN, '25' as unknown as number])
      expect(() => new Bm25Search({ indexBudgetMs: bad })).toThrow(/indexBudgetMs/);
    for (const bad of [-5, '25', null]) {
      const error = await UtcpClient.create({
        tool_search_strategy: { tool_search_strategy_type: 'bm25', index_budget_ms: bad },
      } as never).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UtcpValidationError);
      expect(JSON.stringify((error as UtcpValidationError).issues)).toContain('tool_search_strategy.index_budget_ms');
    }
  });

  it('takes index_budget_ms from the client config: 0 leaves a registration unindexed until idle turns or a search', async () => {
    const advance = vi.spyOn(SegmentBuild.prototype, 'advance');
    const finish = vi.spyOn(SegmentBuild.prototype, 'finish');
    const client = await UtcpClient.create({
      tool_search_strategy: { tool_search_strategy_type: 'bm25', index_budget_ms: 0 },
    });
    try {
      const template = { call_template_type: 'http', url: 'https://api.example.com/items', http_method: 'GET' };
      const docs: Tool[] = tools(1200).map((t) => ({ ...t, name: t.name.slice(2), tool_call_template: template }));
      const content = JSON.stringify({ utcp_version: '1.0.0', manual_version: '1', tools: docs });
      const r = await client.registerManual({
        name: 'm',
        call_template_type: 'text',
        content,
        allowed_communication_protocols: ['http'],
      });
      expect(r.success).toBe(true);
      expect(r.manual.tools).toHaveLength(1200);
      // The registration's one step stopped before the first tool: its deadline had passed.
      expect(advance).toHaveBeenCalledTimes(1);
      expect(finish).not.toHaveBeenCalled();
      const expected = ranking(oneGo(r.manual.tools))[2];
      const hits = await client.searchTools('deploy queue', 20);
      expect(hits.map((t) => t.name)).toEqual(expected);
      expect(finish).toHaveBeenCalledTimes(2);
    } finally {
      await client.close();
    }
  });
});

/** `docs` indexed in one go at registration. */
function oneGo(docs: readonly Tool[]): Bm25Search {
  const s = new Bm25Search({ indexBudgetMs: Infinity });
  s.add(docs);
  return s;
}
