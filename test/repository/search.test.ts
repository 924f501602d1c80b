import { describe, expect, it } from 'vitest';
import type { Tool } from '../../src/core/types.js';
import { Bm25Search } from '../../src/repository/bm25-search.js';
import { tokenize } from '../../src/repository/bm25-text.js';
import { WordMatchSearch } from '../../src/repository/word-match-search.js';
import { InMemoryToolRepository } from '../../src/repository/in-memory-repository.js';
import { catalog, rankingCases, repositorySearchSuite, t } from './search-suite.js';

describe('BM25 search', () => {
  const search = new Bm25Search();
  search.add(catalog);

  it.each(rankingCases)('ranks the right tool first for "%s"', (query, expected) => {
    expect(search.search(query, 3)[0]?.name).toBe(expected);
  });

  it('filters by any of the required tags, case-insensitively', () => {
    expect(search.search('create', 10, ['Calendar']).map((x) => x.name)).toEqual(['calendar.create_event']);
  });

  it('returns all matches for limit 0 and registration order for an empty query', () => {
    expect(search.search('list', 0).length).toBe(3);
    expect(search.search('', 2).map((x) => x.name)).toEqual(['weather.get_current_weather', 'weather.get_forecast']);
    expect(search.search('', 0, ['files']).map((x) => x.name)).toEqual(['fs.read_file', 'fs.write_file']);
  });

  it('forgets removed tools and keeps ranking the rest', () => {
    const s = new Bm25Search();
    s.add(catalog);
    s.remove(catalog.filter((x) => x.name.startsWith('weather.')));
    expect(s.search('weather forecast', 5).map((x) => x.name)).toEqual([]);
    expect(s.search('issue', 1)[0].name).toBe('github.create_issue');
  });

  it('stays correct across compaction after many removals', () => {
    const s = new Bm25Search();
    const many = Array.from({ length: 3000 }, (_, i) =>
      t(`m${i % 3}.tool_${i}`, `Tool number ${i} about ${i % 2 ? 'apples' : 'pears'}`),
    );
    s.add(many);
    s.remove(many.slice(0, 2500));
    const hits = s.search('apples', 0);
    expect(hits.length).toBe(250);
    expect(hits.every((h) => Number(h.name.split('_')[1]) >= 2500)).toBe(true);
  });

  it('indexes a large registration when it is added, keeping registration order for ties', () => {
    // No budget: every tool is indexed by add() (the default budget's steps: test/repository/bm25-steps.test.ts).
    const s = new Bm25Search({ indexBudgetMs: Infinity });
    const reads = { n: 0 };
    const watched = (name: string) => {
      const tool = t(name, 'Shared words about apples');
      return new Proxy(tool, {
        get(target, key, receiver) {
          if (key === 'description') reads.n++;
          return Reflect.get(target, key, receiver);
        },
      });
    };
    s.add([watched('small.first'), watched('small.second')]);
    expect(reads.n).toBe(0);
    const large = Array.from({ length: 1500 }, (_, i) => watched(`large.tool_${i}`));
    s.add(large);
    // Both the queued small registration and the large one were indexed by add(), not left for the first search:
    // every description was read there.
    const atAdd = reads.n;
    expect(atAdd).toBeGreaterThanOrEqual(1502);
    expect(s.search('apples', 3).map((x) => x.name)).toEqual(['small.first', 'small.second', 'large.tool_0']);
    expect(reads.n).toBe(atAdd);
  });

  it('ranks exactly when a large registration outgrows the first size of the term and posting tables', () => {
    // Short distinct words: far more terms than the writer sizes for (twice the tools) and more postings than one
    // per 8 characters, so both tables grow while the segment is built. Each tool repeats its first word last, so the
    // tool being indexed when a table grows has a posting made before the growth and added to after it.
    const word = (i: number, j: number) => `${(i * 40 + j).toString(36)}q`;
    const words = (i: number) => Array.from({ length: 40 }, (_, j) => word(i, j));
    const many = Array.from({ length: 1100 }, (_, i) =>
      t(`grow.tool_${i}`, [...words(i), word(i, 0), 'common'].join(' ')),
    );
    const s = new Bm25Search();
    s.add(many);
    for (let i = 1; i < many.length; i++) {
      // Equal lengths and document frequencies: tool i's word counted twice must beat tool i-1's counted once.
      expect(s.search(`${word(i - 1, 1)} ${word(i, 0)}`, 2).map((x) => x.name)).toEqual([
        `grow.tool_${i}`,
        `grow.tool_${i - 1}`,
      ]);
    }
    expect(s.search('common', 0)).toHaveLength(1100);
  });

  it('returns the same best k as ranking every match and cutting it, ties in registration order', () => {
    // Few distinct words, so most scores tie: the heap's order must match the full sort's (score, then registration).
    const words = ['alpha', 'beta', 'gamma', 'delta', 'omega'];
    const many = Array.from({ length: 1500 }, (_, i) =>
      t(`ties.tool_${i}`, `${words[i % 5]} ${words[(i * 3) % 5]} ${i % 7 === 0 ? words[(i * 2) % 5] : ''}`),
    );
    const s = new Bm25Search();
    s.add(many);
    for (const query of ['alpha', 'beta gamma', 'omega delta alpha', 'gamma gamma', 'delta']) {
      const all = s.search(query, 0).map((x) => x.name);
      for (const k of [1, 2, 3, 10, 57, 1000]) expect(s.search(query, k).map((x) => x.name)).toEqual(all.slice(0, k));
    }
  });

  it('tokenizes camelCase, snake_case and plurals', () => {
    expect(tokenize('getWeatherForecasts for_the_cities')).toEqual(['get', 'weather', 'forecast', 'city']);
  });

  it('splits words at non-letters and lower→Upper only, Unicode letters and digits included', () => {
    expect(tokenize('HTTPServer getHTTP v2Api')).toEqual(['httpserver', 'get', 'http', 'v2', 'api']);
    expect(tokenize('ÉcoleNormale straße ΩmegaΣigma 日本語')).toEqual([
      'école',
      'normale',
      'straße',
      'ωmega',
      'σigma',
      '日本語',
    ]);
    expect(tokenize('x-y_z a1B2 ǅemo')).toEqual(['a1', 'b2', 'ǆemo']);
    expect(tokenize('')).toEqual([]);
  });

  it('scores as BM25F computed from tokenize() field by field, for small and large registrations', () => {
    // An independent reference: every field tokenized on its own with the public tokenizer, weighted term
    // frequencies and lengths summed in the writer's order and kept as 32-bit floats, as the index keeps them.
    const pieces = [
      'alpha',
      'Beta',
      'gammaDelta',
      'ÉCOLE',
      'école',
      'straße',
      'Ωmega',
      '日本',
      'x2',
      'forecasts',
      'forecast',
      'the',
      'a',
      'HTTPServer',
      'getHTTP',
      'ǅemo',
      '—',
      '42',
      'snake_case',
      'İstanbul',
    ];
    let seed = 7;
    const next = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    const text = (n: number) =>
      Array.from({ length: n }, () => pieces[Math.floor(next() * pieces.length)]).join(next() < 0.2 ? '' : ' ');
    const tool = (i: number) =>
      t(
        `m${i % 3}.${text(2)}_${i}`,
        next() < 0.3 ? `${text(4)}\n\n${text(12)}` : text(1 + Math.floor(next() * 8)),
        Array.from({ length: Math.floor(next() * 3) }, () => text(1)),
      );
    const small = Array.from({ length: 300 }, (_, i) => tool(i));
    const large = Array.from({ length: 1100 }, (_, i) => tool(300 + i));
    const docs = [...small, ...large];
    const s = new Bm25Search();
    s.add(small);
    s.add(large);
    const fields = (x: Tool): [string, number, boolean][] => {
      const dot = x.name.indexOf('.');
      const cut = x.description.indexOf('\n\n');
      return [
        [x.name.slice(dot + 1), 3, true],
        [x.name.slice(0, dot), 0.5, true],
        [cut === -1 ? x.description : x.description.slice(0, cut), 1, true],
        [cut === -1 ? '' : x.description.slice(cut + 2), 0.1, false],
        ...x.tags.map((tag): [string, number, boolean] => [tag, 3, true]),
      ];
    };
    const tf = docs.map((x) => {
      const m = new Map<string, number>();
      let len = 0;
      for (const [field, weight, counts] of fields(x))
        for (const term of tokenize(field)) {
          m.set(term, (m.get(term) ?? 0) + weight);
          if (counts) len += weight;
        }
      for (const [term, f] of m) m.set(term, Math.fround(f));
      return { m, len: Math.fround(len) };
    });
    let total = 0;
    for (const d of tf) total += d.len;
    const avg = total / docs.length;
    const reference = (query: string) => {
      const terms = [...new Set(tokenize(query))];
      const scores = new Map<number, number>();
      for (const term of terms) {
        const df = tf.filter((d) => d.m.has(term)).length;
        if (df === 0) continue;
        const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
        tf.forEach((d, id) => {
          const f = d.m.get(term);
          if (f === undefined) return;
          const score = (idf * f * 2.2) / (f + 1.2 * (1 - 0.75 + (0.75 * d.len) / avg));
          scores.set(id, (scores.get(id) ?? 0) + score);
        });
      }
      return [...scores].sort((x, y) => y[1] - x[1] || x[0] - y[0]).map(([id]) => docs[id].name);
    };
    for (const query of [
      'alpha',
      'beta gamma',
      'école',
      'ecole',
      'forecast',
      'straße ωmega',
      '日本',
      'x2 42',
      'http server',
      'httpserver get',
      'ǆemo',
      'snake case',
      'istanbul',
      'i̇stanbul',
      'm1',
      'delta',
    ])
      expect(
        s.search(query, 0).map((x) => x.name),
        query,
      ).toEqual(reference(query));
  });
});

repositorySearchSuite('in memory (BM25)', async () => new InMemoryToolRepository(new Bm25Search()));

describe('tag_and_description_word_match (official strategy)', () => {
  const search = new WordMatchSearch();
  search.add(catalog);

  it('scores tags, description words and name tokens', () => {
    expect(search.search('weather forecast', 1)[0].name).toBe('weather.get_forecast');
    expect(search.search('send email', 1)[0].name).toBe('mail.send_email');
  });

  it('keeps zero-score tools at the end and returns all for limit 0', () => {
    expect(search.search('zzz', 0)).toHaveLength(catalog.length);
  });
});
