import { describe, expect, it } from 'vitest';
import { globToRegExp } from '../../src/loaders/openapi/operation-filter.js';
import { convert, convertFixture, oas3, op } from './openapi-helpers.js';

const idParam = [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }];
const doc = oas3({
  '/pets': { get: op('listPets', { tags: ['Pets'] }), post: op('createPet', { tags: ['pets', 'write'] }) },
  '/pets/{id}': {
    parameters: idParam,
    get: op('getPet', { tags: ['pets'] }),
    delete: op('deletePet', { tags: ['pets', 'write'] }),
  },
  '/admin/users': { get: op('listUsers', { tags: ['admin'] }) },
  '/admin/users/{id}/roles': { parameters: idParam, put: op(undefined, { tags: ['admin'] }) },
  '/store/order': { post: op('placeOrder') },
});

const names = async (filter: Record<string, unknown>) =>
  (await convert(doc, { filter })).manual.tools.map((t) => t.name);

describe('openapi_filter (docs/design/openapi.md#filters)', () => {
  it('converts `*` to "anything but /" and `**` to "anything"', () => {
    expect(globToRegExp('/admin/*').test('/admin/users')).toBe(true);
    expect(globToRegExp('/admin/*').test('/admin/users/1')).toBe(false);
    expect(globToRegExp('/admin/**').test('/admin/users/{id}/roles')).toBe(true);
    expect(globToRegExp('/pets/{id}').test('/pets/{id}')).toBe(true);
    expect(globToRegExp('/pets.json').test('/petsXjson')).toBe(false);
  });

  it('include_tags matches any tag, case-insensitively', async () => {
    expect(await names({ include_tags: ['PETS'] })).toEqual(['listPets', 'createPet', 'getPet', 'deletePet']);
  });

  it('exclude_paths with ** removes a whole subtree', async () => {
    expect(await names({ exclude_paths: ['/admin/**'] })).toEqual([
      'listPets',
      'createPet',
      'getPet',
      'deletePet',
      'placeOrder',
    ]);
  });

  it('include_paths with * stays within one segment', async () => {
    expect(await names({ include_paths: ['/admin/*', '/store/*'] })).toEqual(['listUsers', 'placeOrder']);
  });

  it('include_methods and exclude_methods are case-insensitive', async () => {
    expect(await names({ include_methods: ['get'] })).toEqual(['listPets', 'getPet', 'listUsers']);
    expect(await names({ exclude_methods: ['GET', 'Post'] })).toEqual(['deletePet', 'put_admin_users_id_roles']);
  });

  it('operation-id lists match the original operationId or the generated tool name', async () => {
    expect(await names({ include_operation_ids: ['getPet', 'put_admin_users_id_roles'] })).toEqual([
      'getPet',
      'put_admin_users_id_roles',
    ]);
    expect(await names({ exclude_operation_ids: ['deletePet', 'put_admin_users_id_roles'] })).toEqual([
      'listPets',
      'createPet',
      'getPet',
      'listUsers',
      'placeOrder',
    ]);
  });

  it('keeps an operation only when it matches every include list and no exclude list', async () => {
    expect(
      await names({ include_tags: ['pets'], include_methods: ['GET', 'DELETE'], exclude_tags: ['write'] }),
    ).toEqual(['listPets', 'getPet']);
  });

  it('adds one summary warning and lists the filtered operations in the report', async () => {
    const r = await convert(doc, { filter: { exclude_tags: ['admin'] } });
    expect(r.report.counts).toEqual({ operations: 7, tools: 5, skipped: 0, filtered: 2 });
    expect(r.report.warnings).toEqual(['2 operations filtered']);
    expect(r.report.filtered).toEqual([
      { method: 'get', path: '/admin/users', operationId: 'listUsers' },
      { method: 'put', path: '/admin/users/{id}/roles' },
    ]);
  });

  it('applies filters before name collisions are resolved', async () => {
    const dup = oas3({ '/a': { get: op('same', { tags: ['x'] }) }, '/b': { get: op('same', { tags: ['y'] }) } });
    const r = await convert(dup, { filter: { include_tags: ['y'] } });
    expect(r.manual.tools.map((t) => [t.name, t.tool_call_template.url])).toEqual([
      ['same', 'https://api.example.com/b'],
    ]);
  });

  it('rejects a filter list that is not an array of strings, and reports unknown keys', async () => {
    await expect(convert(doc, { filter: { include_tags: [1] } })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    const r = await convert(doc, { filter: { include_tag: ['pets'] } });
    expect(r.manual.tools).toHaveLength(7);
    expect(r.report.warnings).toEqual([expect.stringContaining('openapi_filter.include_tag')]);
  });
});

describe('conversion report', () => {
  it('accounts for every operation: operations = tools + skipped + filtered', async () => {
    const r = await convertFixture('shop-3.0.json', { filter: { exclude_operation_ids: ['upload'] } });
    const c = r.report.counts;
    expect(c).toEqual({ operations: 15, tools: 10, skipped: 4, filtered: 1 });
    expect(c.operations).toBe(c.tools + c.skipped + c.filtered);
    expect(r.report.skipped.map((s) => [s.method, s.path, s.reason.split(' ')[0]])).toEqual([
      ['options', '/orders', 'OPTIONS'],
      ['trace', '/orders', 'TRACE'],
      ['options', '/legacy/orders', 'OPTIONS'],
      ['trace', '/legacy/orders', 'TRACE'],
    ]);
  });

  it('lists each skipped operation in the warnings, then aggregated dropped constructs, then the filter count', async () => {
    const r = await convertFixture('shop-3.0.json', {
      specUrl: 'https://specs.example.org/openapi.json',
      filter: { exclude_operation_ids: ['upload'] },
    });
    expect(r.report.warnings).toEqual([
      'Skipped OPTIONS /orders (ordersOptions): OPTIONS operations are not supported by the http call template',
      'Skipped TRACE /orders: TRACE operations are not supported by the http call template',
      'Skipped OPTIONS /legacy/orders (ordersOptions): OPTIONS operations are not supported by the http call template',
      'Skipped TRACE /legacy/orders: TRACE operations are not supported by the http call template',
      'Dropped header parameter Accept at GET /orders and 1 more place: ignored: Accept, Content-Type and Authorization are not parameters in OpenAPI',
      'Dropped header parameter Content-Type at GET /orders and 1 more place: ignored: Accept, Content-Type and Authorization are not parameters in OpenAPI',
      'Dropped header parameter Authorization at GET /orders and 1 more place: ignored: Accept, Content-Type and Authorization are not parameters in OpenAPI',
      'Dropped keyword xml at GET /orders and 1 more place: OpenAPI documentation, not JSON Schema; removed',
      'Dropped keyword externalDocs at GET /orders and 1 more place: OpenAPI documentation, not JSON Schema; removed',
      'Dropped query parameter orderId at GET /orders/{orderId}: clashes with the path parameter of the same name',
      'Dropped header parameter orderId at GET /orders/{orderId}: clashes with the path parameter of the same name',
      'Changed example at GET /orders and 3 more places: OpenAPI example moved into the JSON Schema examples array',
      'Changed nullable at GET /orders and 3 more places: OpenAPI 3.0 nullable (Swagger x-nullable) rewritten as a JSON Schema null type',
      'Changed boolean exclusiveMinimum at GET /orders and 1 more place: rewritten in the JSON Schema 2020-12 numeric form',
      '1 operations filtered',
    ]);
  });

  it('skips a path item whose $ref cannot be resolved, with the reason', async () => {
    const r = await convert(
      oas3({ '/a': { $ref: '#/paths/~1missing' }, '/b': { $ref: 'https://other.example.com/spec.yaml#/paths/~1b' } }),
    );
    expect(r.report.dropped).toEqual([
      {
        location: 'paths./a',
        construct: 'path item',
        reason: 'unresolved reference #/paths/~1missing; its operations are not converted',
      },
      {
        location: 'paths./b',
        construct: 'path item',
        reason:
          'external reference https://other.example.com/spec.yaml#/paths/~1b is not fetched; its operations are not converted',
      },
    ]);
  });

  it('skips an operation that is not an object', async () => {
    const r = await convert(oas3({ '/a': { get: 'nope', post: op('ok') } }));
    expect(r.report.skipped).toEqual([{ method: 'get', path: '/a', reason: 'the operation is not an object' }]);
    expect(r.manual.tools.map((t) => t.name)).toEqual(['ok']);
  });
});

describe('operation $refs', () => {
  it('follows a local $ref in operation position and reports an unresolvable one', async () => {
    const r = await convert(
      oas3(
        { '/a': { get: { $ref: '#/x-operations/getA' }, post: { $ref: '#/x-operations/nope' } } },
        { 'x-operations': { getA: op('getA', { summary: 'A' }) } },
      ),
    );
    expect(r.manual.tools.map((t) => [t.name, t.description])).toEqual([['getA', 'A']]);
    expect(r.report.skipped).toEqual([
      { method: 'post', path: '/a', reason: 'operation unresolved reference #/x-operations/nope' },
    ]);
  });
});

describe('filters and unsupported methods', () => {
  it('counts a filtered HEAD operation as filtered, not as a skip', async () => {
    const r = await convert(oas3({ '/a': { get: op('a'), head: op('headA') } }), {
      filter: { exclude_methods: ['head'] },
    });
    expect(r.report.counts).toEqual({ operations: 2, tools: 1, skipped: 0, filtered: 1 });
    expect(r.report.warnings).toEqual(['1 operations filtered']);
  });
});
