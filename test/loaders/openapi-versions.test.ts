import { describe, expect, it } from 'vitest';
import { convertOpenApiDocument } from '../../src/loaders/openapi/index.js';
import { convertOpenApi } from '../../src/loaders/openapi/client-adapter.js';
import { expectRefsResolve } from './openapi-assertions.js';
import { convertFixture, fixtureText, toolNamed } from './openapi-helpers.js';

describe('Swagger 2.0 (YAML fixture)', () => {
  it('detects 2.0 from an unquoted YAML `swagger: 2.0` (a number) and builds the base URL from schemes/host/basePath', async () => {
    const r = await convertFixture('petstore-swagger2.yaml');
    expect(r.report.specVersion).toBe('2.0');
    expect(toolNamed(r, 'addPet').tool_call_template.url).toBe('https://petstore.swagger.io/v2/pet');
    expect(toolNamed(r, 'uploadFile').tool_call_template.url).toBe(
      'https://petstore.swagger.io/v2/pet/{petId}/uploadImage',
    );
  });

  it('turns an `in: body` parameter into the body with the first JSON-like consumes entry', async () => {
    const t = toolNamed(await convertFixture('petstore-swagger2.yaml'), 'addPet');
    expect(t.tool_call_template).toMatchObject({
      http_method: 'POST',
      body_field: 'body',
      content_type: 'application/json',
    });
    expect(t.inputs.required).toEqual(['body']);
    const body = (t.inputs.properties as any).body;
    expect(body.description).toBe('Pet object that needs to be added to the store');
    expect(body.properties.category).toEqual({
      type: 'object',
      properties: { id: { type: 'integer', format: 'int64' }, name: { type: 'string' } },
    });
    expect(body.properties.tags.items.properties.name).toEqual({ type: 'string' });
    expect(body.externalDocs).toBeUndefined();
    expect(body.properties.name).toEqual({ type: 'string', examples: ['doggie'] });
  });

  it('maps x-nullable to a type array (null added to enum) and boolean exclusiveMaximum to the numeric form', async () => {
    const r = await convertFixture('petstore-swagger2.yaml');
    const status = (toolNamed(r, 'addPet').inputs.properties as any).body.properties.status;
    expect(status).toEqual({
      type: ['string', 'null'],
      description: 'pet status in the store',
      enum: ['available', 'pending', 'sold', null],
    });
    const limit = (toolNamed(r, 'findPetsByStatus').inputs.properties as any).limit;
    expect(limit).toEqual({ type: ['integer', 'null'], format: 'int32', minimum: 1, exclusiveMaximum: 100 });
  });

  it('builds non-body parameter schemas from the parameter keywords', async () => {
    const t = toolNamed(await convertFixture('petstore-swagger2.yaml'), 'findPetsByStatus');
    expect((t.inputs.properties as any).status).toEqual({
      type: 'array',
      items: { type: 'string', enum: ['available', 'pending', 'sold'], default: 'available' },
      description: 'Status values that need to be considered for filter',
    });
    expect(t.inputs.required).toEqual(['status']);
    expect(t.tool_call_template).not.toHaveProperty('body_field');
  });

  it('reads integer YAML response keys and 2.0 response examples into outputs', async () => {
    const t = toolNamed(await convertFixture('petstore-swagger2.yaml'), 'findPetsByStatus');
    expect(t.outputs.type).toBe('array');
    expect((t.outputs.items as any).required).toEqual(['name', 'photoUrls']);
    expect(t.outputs.examples).toEqual([[{ id: 1, name: 'doggie', photoUrls: [] }]]);
  });

  it('sends formData with a file parameter as multipart/form-data, one object property per field', async () => {
    const t = toolNamed(await convertFixture('petstore-swagger2.yaml'), 'uploadFile');
    expect(t.tool_call_template.content_type).toBe('multipart/form-data');
    expect(t.tool_call_template.body_field).toBe('body');
    expect((t.inputs.properties as any).body).toEqual({
      type: 'object',
      properties: {
        additionalMetadata: { type: 'string', description: 'Additional data to pass to server' },
        file: {
          description: expect.stringMatching(/^file to upload \(A file: its bytes base64-encoded/),
          anyOf: [{ type: 'string', contentEncoding: 'base64' }, expect.objectContaining({ required: ['data'] })],
        },
      },
      required: ['file'],
    });
    expect(t.tool_call_template).toMatchObject({ file_fields: ['file'] });
    expect(t.inputs.required).toEqual(['petId', 'body']);
  });

  it('sends formData without files as application/x-www-form-urlencoded', async () => {
    const t = toolNamed(await convertFixture('petstore-swagger2.yaml'), 'updatePetWithForm');
    expect(t.tool_call_template.content_type).toBe('application/x-www-form-urlencoded');
    expect(Object.keys((t.inputs.properties as any).body.properties)).toEqual(['name', 'status']);
  });

  it('maps 2.0 security definitions (apiKey, basic, implicit oauth2) to one variable per scheme', async () => {
    const r = await convertFixture('petstore-swagger2.yaml');
    expect(toolNamed(r, 'findPetsByStatus').tool_call_template.auth).toEqual({
      auth_type: 'api_key',
      api_key: '${API_KEY}',
      var_name: 'api_key',
      location: 'header',
    });
    expect(toolNamed(r, 'deletePet').tool_call_template.auth).toEqual({
      auth_type: 'basic',
      username: '${BASIC_AUTH_USERNAME}',
      password: '${BASIC_AUTH_PASSWORD}',
    });
    expect(toolNamed(r, 'addPet').tool_call_template.auth).toEqual({
      auth_type: 'api_key',
      api_key: 'Bearer ${PETSTORE_AUTH_ACCESS_TOKEN}',
      var_name: 'Authorization',
      location: 'header',
    });
    expect(toolNamed(r, 'deletePet').tool_call_template.header_fields).toEqual(['api_key']);
  });

  it('skips HEAD with a warning and accounts for every operation', async () => {
    const r = await convertFixture('petstore-swagger2.yaml');
    expect(r.report.counts).toEqual({ operations: 6, tools: 5, skipped: 1, filtered: 0 });
    expect(r.report.skipped).toEqual([
      { method: 'head', path: '/pet/{petId}', operationId: 'headPet', reason: expect.stringContaining('HEAD') },
    ]);
    expect(r.report.warnings).toContain(
      'Skipped HEAD /pet/{petId} (headPet): HEAD operations are not supported by the http call template',
    );
  });

  it('uses the 2.0 spec URL host when host is absent, and the https scheme when listed', async () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: '1' },
      basePath: '/api',
      paths: { '/x': { get: { operationId: 'x', responses: {} } } },
    };
    const r = await convertOpenApiDocument(doc, { manualName: 'm', specUrl: 'https://specs.example.com/swagger.json' });
    expect(r.manual.tools[0].tool_call_template.url).toBe('https://specs.example.com/api/x');
  });
});

describe('OpenAPI 3.0 (JSON fixture)', () => {
  const specUrl = 'https://specs.example.org/shop/openapi.json';

  it('converts every get/put/post/delete/patch operation and reports the rest', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl });
    expect(r.report.specVersion).toBe('3.0');
    expect(r.report.counts).toEqual({ operations: 15, tools: 11, skipped: 4, filtered: 0 });
    expect(r.manual.tools.map((t) => t.name)).toEqual([
      'listOrders',
      'createOrder',
      'listOrders_2',
      'createOrder_2',
      'get_orders_orderId',
      'replaceOrder',
      'upload',
      'uploadMultipart',
      'uploadRaw',
      'patchAnything',
      'get_root',
    ]);
    expect(r.report.skipped.map((s) => `${s.method} ${s.path}`)).toEqual([
      'options /orders',
      'trace /orders',
      'options /legacy/orders',
      'trace /legacy/orders',
    ]);
  });

  it('returns the manual shape with the manual name on every template', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl, manualName: 'shop' });
    expect(r.manual.utcp_version).toBe('1.0.1');
    expect(r.manual.manual_version).toBe('2.1.0');
    expect(new Set(r.manual.tools.map((t) => t.tool_call_template.name))).toEqual(new Set(['shop']));
    expect(toolNamed(r, 'listOrders')).toMatchObject({
      description: 'List orders\n\nLong description',
      tags: ['orders'],
    });
    expect(toolNamed(r, 'createOrder').description).toBe('Creates an order');
    expect(toolNamed(r, 'upload')).toMatchObject({ description: '', tags: [] });
  });

  it('expands the example in docs/design/openapi.md#example exactly', async () => {
    const yaml = [
      'openapi: 3.0.3',
      'servers: [{ url: "https://{region}.api.example.com/v1", variables: { region: { default: eu } } }]',
      'paths:',
      '  /pets/{petId}:',
      '    parameters: [{ name: petId, in: path, required: true, schema: { type: string } }]',
      '    get: { operationId: getPet, tags: [pets], security: [{ api_key: [] }] }',
      'components: { securitySchemes: { api_key: { type: apiKey, in: header, name: X-API-Key } } }',
    ].join('\n');
    const r = await convertOpenApiDocument(yaml, { manualName: 'petstore' });
    expect(r.manual.tools).toEqual([
      {
        name: 'getPet',
        description: '',
        tags: ['pets'],
        inputs: { type: 'object', properties: { petId: { type: 'string' } }, required: ['petId'] },
        outputs: {},
        tool_call_template: {
          name: 'petstore',
          call_template_type: 'http',
          http_method: 'GET',
          url: 'https://eu.api.example.com/v1/pets/{petId}',
          content_type: 'application/json',
          auth: { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-API-Key', location: 'header' },
        },
      },
    ]);
  });

  it('normalises nullable, examples, boolean exclusiveMinimum and drops xml/externalDocs', async () => {
    const order = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), 'createOrder').outputs as any;
    expect(order.xml).toBeUndefined();
    expect(order.externalDocs).toBeUndefined();
    expect(order.properties).toEqual({
      id: { type: 'string', examples: ['o1'] },
      note: { type: ['string', 'null'] },
      status: { type: ['string', 'null'], enum: ['new', 'paid', null] },
      total: { type: 'number', exclusiveMinimum: 0 },
      flag: { type: 'boolean', examples: [true, 1] },
    });
  });

  it('picks 2XX with a +json media type when there is no 200/201', async () => {
    const t = toolNamed(await convertFixture('shop-3.0.json', { specUrl }), 'get_orders_orderId');
    expect((t.outputs as any).required).toEqual(['id']);
  });

  it('falls back to the default response and to the first content entry with a schema', async () => {
    const r = await convertFixture('shop-3.0.json', { specUrl });
    expect(toolNamed(r, 'replaceOrder').outputs).toEqual({ type: 'string' });
    expect(toolNamed(r, 'uploadRaw').outputs).toEqual({ type: 'string' });
    expect(toolNamed(r, 'upload').outputs).toEqual({});
  });

  it('accepts JSON text, YAML text and an object alike', async () => {
    const fromText = await convertOpenApiDocument(fixtureText('shop-3.0.json'), { manualName: 'm', specUrl });
    const fromObject = await convertOpenApiDocument(JSON.parse(fixtureText('shop-3.0.json')), {
      manualName: 'm',
      specUrl,
    });
    const YAML = await import('yaml');
    const fromYaml = await convertOpenApiDocument(YAML.stringify(JSON.parse(fixtureText('shop-3.0.json'))), {
      manualName: 'm',
      specUrl,
    });
    expect(fromObject.manual).toEqual(fromText.manual);
    expect(fromYaml.manual).toEqual(fromText.manual);
  });

  it('does not mutate the input document', async () => {
    const doc = JSON.parse(fixtureText('shop-3.0.json'));
    const before = JSON.stringify(doc);
    await convertOpenApiDocument(doc, { manualName: 'm', specUrl });
    expect(JSON.stringify(doc)).toBe(before);
  });
});

describe('OpenAPI 3.1 (YAML fixture)', () => {
  it('keeps 3.1 type arrays and merges parameter example maps into `examples`', async () => {
    const r = await convertFixture('graph-3.1.yaml');
    expect(r.report.specVersion).toBe('3.1');
    const t = toolNamed(r, 'getNode');
    expect((t.inputs.properties as any).id).toEqual({ type: ['string', 'integer'], examples: ['root', 42] });
    expect((t.outputs as any).properties.value).toEqual({ type: ['number', 'null'] });
    expect((t.outputs as any).properties.name).toEqual({ type: 'string', examples: ['root', 'leaf'] });
  });

  it('produces tools whose every $ref resolves inside the tool schema', async () => {
    const r = await convertFixture('graph-3.1.yaml');
    for (const t of r.manual.tools) {
      expectRefsResolve(t.inputs, `${t.name}.inputs`);
      expectRefsResolve(t.outputs, `${t.name}.outputs`);
    }
  });
});

describe('document input', () => {
  it('strips a UTF-8 BOM before parsing', async () => {
    const r = await convertFixture('bom.json');
    expect(r.manual.tools.map((t) => t.tool_call_template.url)).toEqual(['https://bom.example.com/ping']);
  });

  it('accepts UTF-8 bytes', async () => {
    const r = await convertOpenApiDocument(new TextEncoder().encode(fixtureText('bom.json')), { manualName: 'm' });
    expect(r.manual.tools).toHaveLength(1);
  });

  it('rejects a document above max_document_bytes before parsing', async () => {
    await expect(
      convertOpenApiDocument(fixtureText('shop-3.0.json'), { manualName: 'm', limits: { max_document_bytes: 1000 } }),
    ).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });

  it('rejects a YAML alias bomb with max_yaml_aliases', async () => {
    const lines = ['openapi: 3.0.0', 'a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      lines.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      );
    lines.push('paths: {}');
    await expect(convertOpenApiDocument(lines.join('\n'), { manualName: 'm' })).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
      message: expect.stringContaining('alias'),
    });
  });

  it('rejects something that is not an OpenAPI document', async () => {
    await expect(convertOpenApiDocument('{"tools": []}', { manualName: 'm' })).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
    });
    await expect(convertOpenApiDocument('- just\n- a list', { manualName: 'm' })).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
    });
  });

  it('defaults the manual name to the sanitised info.title', async () => {
    const r = await convertOpenApiDocument(fixtureText('bom.json'));
    expect(r.manual.tools[0].tool_call_template.name).toBe('BOM');
  });

  it('convertOpenApi (the transport entry) returns the manual and the report warnings', async () => {
    const doc = JSON.parse(fixtureText('shop-3.0.json'));
    const { manual, warnings } = await convertOpenApi(doc, { manualName: 'shop' });
    expect((manual as { tools: unknown[] }).tools).toHaveLength(11);
    expect(warnings).toContainEqual(
      expect.stringMatching(
        /^Changed relative server URL .* at PUT \/orders\/\{orderId\}: bound to the variable \$\{BASE_URL\}: set shop_BASE_URL/,
      ),
    );
  });
});

describe('malformed documents', () => {
  it('reports a non-object paths and converts nothing', async () => {
    const r = await convertOpenApiDocument({ openapi: '3.0.0', paths: ['/a'] }, { manualName: 'm' });
    expect(r.manual.tools).toEqual([]);
    expect(r.report.dropped).toEqual([
      { location: 'document', construct: 'paths', reason: 'not an object; no operations converted' },
    ]);
  });

  it('accepts a 3.1 document without paths', async () => {
    const r = await convertOpenApiDocument({ openapi: '3.1.0', webhooks: { x: { post: {} } } }, { manualName: 'm' });
    expect(r.report.counts).toEqual({ operations: 0, tools: 0, skipped: 0, filtered: 0 });
  });

  it('turns an operation that cannot be converted (a 20,000-deep schema) into a reported skip', async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 20_000; i++) schema = { type: 'object', properties: { p: schema } };
    const doc = {
      openapi: '3.0.0',
      servers: [{ url: 'https://a.example.com' }],
      paths: {
        '/deep': {
          post: { operationId: 'deep', requestBody: { content: { 'application/json': { schema } } }, responses: {} },
        },
        '/ok': { get: { operationId: 'ok', responses: {} } },
      },
    };
    const r = await convertOpenApiDocument(doc, { manualName: 'm' });
    expect(r.manual.tools.map((t) => t.name)).toEqual(['ok']);
    expect(r.report.skipped).toEqual([
      {
        method: 'post',
        path: '/deep',
        operationId: 'deep',
        reason: expect.stringMatching(/^conversion failed: .*call stack/),
      },
    ]);
  });
});
