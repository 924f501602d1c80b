import { describe, expect, it } from 'vitest';
import { fnv1a32, toolBaseName } from '../../src/loaders/openapi/tool-name.js';
import { convert, oas3, op } from './openapi-helpers.js';

describe('tool names (docs/design/openapi.md#naming)', () => {
  it('computes FNV-1a 32-bit over UTF-8 bytes', () => {
    expect(fnv1a32('')).toBe('811c9dc5');
    expect(fnv1a32('a')).toBe('e40c292c');
    expect(fnv1a32('foobar')).toBe('bf9cf968');
    // "é" is hashed as its two UTF-8 bytes c3 a9 (hashing the UTF-16 unit 0xe9 would give 6c0b6c44).
    expect(fnv1a32('é')).toBe('1e9de8c1');
  });

  it('derives <method>_<path> for operations without operationId, and get_root for /', async () => {
    const r = await convert(oas3({ '/users/{id}/posts': { get: op() }, '/': { get: op(), post: op('') } }));
    expect(r.manual.tools.map((t) => t.name)).toEqual(['get_users_id_posts', 'get_root', 'post_root']);
  });

  it('sanitises punctuation, collapses and trims underscores', async () => {
    const r = await convert(
      oas3({
        '/a': { get: op('repos/list-for.org (v2)!') },
        '/b': { get: op('__déjà  vu__') },
        '/c': { get: op('€€€') },
      }),
    );
    expect(r.manual.tools.map((t) => t.name)).toEqual(['repos_list-for_org_v2', 'd_j_vu', 'operation']);
  });

  it('shortens names over 64 characters to 55 characters + _ + FNV-1a of the unsanitised source', async () => {
    const id = 'x'.repeat(50) + '.' + 'y'.repeat(30);
    const r = await convert(oas3({ '/a': { get: op(id) } }));
    const name = r.manual.tools[0].name;
    expect(name).toBe(`${'x'.repeat(50)}_yyyy_${fnv1a32(id)}`);
    expect(name).toHaveLength(64);
    expect(toolBaseName('z'.repeat(64))).toBe('z'.repeat(64));
  });

  it('gives duplicates _2, _3 and keeps them within 64 characters', async () => {
    const long = 'q'.repeat(64);
    const r = await convert(
      oas3({
        '/a': { get: op('dup'), post: op('dup'), put: op('dup_2') },
        '/b': { get: op(long), post: op(long) },
        '/c': { get: op('dup') },
      }),
    );
    const names = r.manual.tools.map((t) => t.name);
    expect(names).toEqual(['dup', 'dup_2', 'dup_2_2', long, `${'q'.repeat(62)}_2`, 'dup_3']);
    expect(names.every((n) => n.length <= 64)).toBe(true);
  });

  it('treats only get/put/post/delete/patch as operations: parameters, servers, summary and x-* make no ghost tools', async () => {
    const r = await convert(
      oas3({
        '/a': {
          summary: 's',
          description: 'd',
          parameters: [{ name: 'q', in: 'query', schema: { type: 'string' } }],
          servers: [{ url: 'https://other.example.com' }],
          'x-codegen': { get: {} },
          delete: op('del'),
          patch: op('pat'),
          query: op('notYet'),
        },
        'x-extension-path': { get: op('ghost') },
      }),
    );
    expect(r.manual.tools.map((t) => t.name)).toEqual(['del', 'pat']);
    expect(r.report.counts.operations).toBe(2);
    expect(r.report.dropped).toContainEqual({
      location: 'paths./a',
      construct: 'key query',
      reason: expect.stringContaining('not an operation'),
    });
  });
});

describe('tool descriptions (docs/design/openapi.md#naming)', () => {
  it('keeps the description after the summary, so what a caller must know is not lost', async () => {
    const long =
      'Updates a resource. The request must send If-Match with the ETag of the last read, or it fails with 412.';
    const r = await convert(
      oas3({
        '/both': { put: op('both', { summary: 'Update a resource', description: long }) },
        '/same': { get: op('same', { summary: 'List things', description: 'List things' }) },
        '/prefixed': { get: op('prefixed', { summary: 'List things.', description: 'List things, newest first.' }) },
        '/summary': { get: op('summaryOnly', { summary: 'Only a summary' }) },
        '/description': { get: op('descriptionOnly', { description: 'Only a description' }) },
        '/none': { get: op('none') },
      }),
    );
    expect(Object.fromEntries(r.manual.tools.map((t) => [t.name, t.description]))).toEqual({
      both: `Update a resource\n\n${long}`,
      same: 'List things',
      prefixed: 'List things, newest first.',
      summaryOnly: 'Only a summary',
      descriptionOnly: 'Only a description',
      none: '',
    });
  });
});
