/**
 * The on-disk index cache of large registrations (docs/design/manual-format.md#index-cache): a second search reads the
 * segment instead of building it and ranks exactly as a built one; a damaged or foreign file is ignored and rewritten;
 * a cache that cannot be written is reported and the index is built as usual. Real files in a temp dir.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tool } from '../../src/core/types.js';
import { MAX_CACHE_FILES } from '../../src/repository/bm25-index-cache.js';
import { Bm25Search } from '../../src/repository/bm25-search.js';
import { UtcpClient } from '../../src/index.js';
import { UtcpValidationError } from '../../src/core/errors.js';
import { ranking, tools } from './search-suite.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'utcp-idx-cache-'));
  dirs.push(d);
  return d;
}

const cacheFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.idx'));

function searchWith(dir: string | undefined, docs: Tool[], errors: Error[] = []): Bm25Search {
  const s = new Bm25Search(dir === undefined ? {} : { indexCacheDir: dir, onIndexCacheError: (e) => errors.push(e) });
  s.add(docs);
  return s;
}

describe('bm25 index cache', () => {
  it('writes a large registration once, then reads it (not rebuilt) and ranks exactly as the built index', () => {
    const dir = tempDir();
    const docs = tools(1500);
    const expected = ranking(searchWith(undefined, docs));
    expect(ranking(searchWith(dir, docs))).toEqual(expected);
    const [file] = cacheFiles(dir);
    expect(cacheFiles(dir)).toHaveLength(1);
    // An old mtime stays old only if the second search read the file instead of building and writing it again.
    const old = new Date(Date.now() - 3600_000);
    utimesSync(join(dir, file!), old, old);
    expect(ranking(searchWith(dir, docs))).toEqual(expected);
    // (File systems round the mtime they are given; a rewrite would make it now, an hour later.)
    expect(Math.abs(statSync(join(dir, file!)).mtimeMs - old.getTime())).toBeLessThan(1000);
    expect(readdirSync(dir)).toEqual([file]); // no temporary file left
  });

  it('keeps small registrations out of the cache', () => {
    const dir = tempDir();
    searchWith(dir, tools(100)).search('weather', 5);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('uses a different file for different texts or weights', () => {
    const dir = tempDir();
    searchWith(dir, tools(1100));
    searchWith(dir, tools(1100, 'changed '));
    new Bm25Search({ indexCacheDir: dir, tagWeight: 5 }).add(tools(1100));
    expect(cacheFiles(dir)).toHaveLength(3);
  });

  it.each([
    ['truncated', (b: Buffer) => b.subarray(0, b.length - 7)],
    [
      'a flipped byte in the postings',
      (b: Buffer) => Buffer.concat([b.subarray(0, b.length - 3), Buffer.from([0xff, 0xff, 0x7f])]),
    ],
    [
      'another key in the header',
      (b: Buffer) => Buffer.from(b.toString('latin1').replace(/"key":"[0-9a-f]/, '"key":"x'), 'latin1'),
    ],
    ['not a cache file', () => Buffer.from('{"hello": "world"}')],
    ['a document number out of range', (b: Buffer) => outOfRange(b)],
  ])('ignores a damaged file (%s), ranks as built, and rewrites it', (_, damage) => {
    const dir = tempDir();
    const docs = tools(1200);
    const expected = ranking(searchWith(undefined, docs));
    searchWith(dir, docs);
    const [file] = cacheFiles(dir);
    const path = join(dir, file!);
    const good = readFileSync(path);
    writeFileSync(path, damage(good));
    expect(ranking(searchWith(dir, docs))).toEqual(expected);
    expect(readFileSync(path).equals(good)).toBe(true);
  });

  it('reports a cache it cannot write and still indexes', () => {
    const dir = tempDir();
    const blocked = join(dir, 'a-file');
    writeFileSync(blocked, 'not a folder');
    const errors: Error[] = [];
    const docs = tools(1100);
    expect(ranking(searchWith(blocked, docs, errors))).toEqual(ranking(searchWith(undefined, docs)));
    expect(errors).toHaveLength(1);
  });

  it(`keeps at most ${MAX_CACHE_FILES} files, removing the oldest`, () => {
    const dir = tempDir();
    for (let i = 0; i < MAX_CACHE_FILES + 3; i++) {
      searchWith(dir, tools(1030, `v${i} `));
      const [newest] = cacheFiles(dir).sort((a, b) => statSync(join(dir, b)).mtimeMs - statSync(join(dir, a)).mtimeMs);
      // Spread the mtimes so "oldest" is well defined on coarse file systems.
      const at = new Date(Date.now() - (MAX_CACHE_FILES + 3 - i) * 60_000);
      utimesSync(join(dir, newest!), at, at);
    }
    expect(cacheFiles(dir)).toHaveLength(MAX_CACHE_FILES);
  });
});

/** The same file with the first posting's document number set past the segment. */
function outOfRange(b: Buffer): Buffer {
  const headerLength = b.readUInt32LE(8);
  const header = JSON.parse(b.toString('utf8', 12, 12 + headerLength)) as { docs: number; terms: string[] };
  let at = 12 + headerLength;
  at += (4 - (at % 4)) % 4;
  at += header.docs * 4 + (header.terms.length + 1) * 4; // lens, offsets: the ids start here (Uint16 for this size)
  const copy = Buffer.from(b);
  copy.writeUInt16LE(0xffff, at);
  return copy;
}

describe('index_cache_dir in the client config', () => {
  const manual = (docs: Tool[]) =>
    JSON.stringify({
      tools: docs.map(({ name, description, tags }) => ({
        name: name.slice(2),
        description,
        tags,
        inputs: { type: 'object' },
        tool_call_template: { call_template_type: 'http', url: 'https://api.example.com/x', http_method: 'GET' },
      })),
    });

  it('caches the index of a large manual, relative to the root dir', async () => {
    const root = tempDir();
    const config = { tool_search_strategy: { tool_search_strategy_type: 'bm25', index_cache_dir: 'cache' } };
    const content = manual(tools(1100));
    const results: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const client = await UtcpClient.create(config, { rootDir: root });
      const r = await client.registerManual({
        name: 'm',
        call_template_type: 'text',
        content,
        allowed_communication_protocols: ['http'],
      });
      expect(r.errors).toEqual([]);
      results.push((await client.searchTools('weather forecast', 10)).map((t) => t.name));
      await client.close();
    }
    expect(results[1]).toEqual(results[0]);
    expect(results[0]).toHaveLength(10);
    expect(cacheFiles(join(root, 'cache'))).toHaveLength(1);
  });

  it('warns through the logger when the folder cannot be written', async () => {
    const root = tempDir();
    writeFileSync(join(root, 'cache'), 'a file');
    const warnings: string[] = [];
    // pino-style `(fields, message)` or `(message, fields)`: keep every argument's text.
    const logger = { warn: (...a: unknown[]) => warnings.push(JSON.stringify(a)), debug() {}, info() {}, error() {} };
    const client = await UtcpClient.create(
      { tool_search_strategy: { tool_search_strategy_type: 'bm25', index_cache_dir: 'cache' } },
      { rootDir: root, logger },
    );
    const r = await client.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: manual(tools(1100)),
      allowed_communication_protocols: ['http'],
    });
    expect(r.success).toBe(true);
    expect(await client.searchTools('weather', 1)).toHaveLength(1);
    await client.close();
    expect(warnings.some((w) => w.includes('search index cache could not be written'))).toBe(true);
  });

  it('warns that index_cache_dir is ignored for another search strategy', async () => {
    const warnings: string[] = [];
    const logger = { warn: (...a: unknown[]) => warnings.push(JSON.stringify(a)), debug() {}, info() {}, error() {} };
    const client = await UtcpClient.create(
      { tool_search_strategy: { tool_search_strategy_type: 'tag_and_description_word_match', index_cache_dir: 'x' } },
      { rootDir: tempDir(), logger },
    );
    await client.close();
    expect(warnings.some((w) => w.includes('index_cache_dir is ignored'))).toBe(true);
  });

  it('refuses an index_cache_dir that is not a folder path, naming the field', async () => {
    const error = await UtcpClient.create({
      tool_search_strategy: { tool_search_strategy_type: 'bm25', index_cache_dir: 5 },
    } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpValidationError);
    expect(JSON.stringify((error as UtcpValidationError).issues)).toContain('tool_search_strategy.index_cache_dir');
  });
});

describe('index_on_first_search (docs/design/manual-format.md#search-index)', () => {
  /** The same registrations and removals, with the index built at registration or on the first search. */
  function history(options: ConstructorParameters<typeof Bm25Search>[0]): { search: Bm25Search; big: Tool[] } {
    const search = new Bm25Search(options);
    const small = tools(40, 'small ');
    const big = tools(1500);
    const other = tools(1100, 'other ').map((t) => ({ ...t, name: t.name.replace('m.', 'o.') }));
    search.add(small.slice(0, 20));
    search.add(big);
    search.add(small.slice(20));
    search.remove(small.slice(0, 5));
    search.add(other);
    search.remove(big.slice(0, 900));
    return { search, big };
  }

  it('ranks exactly as the index built at registration, ties, removals and segment order included', () => {
    const eager = ranking(history({ indexBudgetMs: Infinity }).search);
    expect(eager.flat().length).toBeGreaterThan(0);
    expect(ranking(history({ indexOnFirstSearch: true }).search)).toEqual(eager);
  });

  it('builds nothing until the first search: the index cache stays empty, then holds each large registration', () => {
    const dir = tempDir();
    const { search } = history({ indexOnFirstSearch: true, indexCacheDir: dir });
    expect(cacheFiles(dir)).toHaveLength(0);
    const eager = ranking(history({ indexBudgetMs: Infinity }).search);
    expect(ranking(search)).toEqual(eager);
    // Each registration still of 1,024 tools or more at that search is a segment of its own, read from or written to
    // the cache: `other` (1,100). `big` lost 900 of its 1,500 tools before any search, so it is indexed with the
    // small ones, as a segment mostly of removed tools is rebuilt when indexed at registration.
    expect(cacheFiles(dir)).toHaveLength(1);
    const { search: again } = history({ indexOnFirstSearch: true, indexCacheDir: dir });
    expect(ranking(again)).toEqual(eager);
    expect(cacheFiles(dir)).toHaveLength(1);
  });

  it('refuses a value that is not a boolean, naming the field, and warns where it does not apply', async () => {
    const error = await UtcpClient.create({
      tool_search_strategy: { tool_search_strategy_type: 'bm25', index_on_first_search: 'yes' },
    } as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpValidationError);
    expect(JSON.stringify((error as UtcpValidationError).issues)).toContain(
      'tool_search_strategy.index_on_first_search',
    );
    const warnings: string[] = [];
    const logger = { warn: (...a: unknown[]) => warnings.push(JSON.stringify(a)), debug() {}, info() {}, error() {} };
    const client = await UtcpClient.create(
      {
        tool_search_strategy: {
          tool_search_strategy_type: 'tag_and_description_word_match',
          index_on_first_search: true,
        },
      },
      { rootDir: tempDir(), logger },
    );
    await client.close();
    expect(warnings.some((w) => w.includes('index_on_first_search is ignored'))).toBe(true);
  });
});
