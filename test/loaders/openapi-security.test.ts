import { describe, expect, it } from 'vitest';
import { schemeVariableName } from '../../src/loaders/openapi/security-mapper.js';
import { convert, oas3, op } from './openapi-helpers.js';

const SCHEMES = {
  api_key: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
  queryKey: { type: 'apiKey', in: 'query', name: 'key' },
  cookieKey: { type: 'apiKey', in: 'cookie', name: 'sid' },
  bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
  basicAuth: { type: 'http', scheme: 'Basic' },
  digestAuth: { type: 'http', scheme: 'digest' },
  mtls: { type: 'mutualTLS' },
  petstore_auth: {
    type: 'oauth2',
    flows: { implicit: { authorizationUrl: 'https://auth.example.com/authorize', scopes: { 'read:pets': '' } } },
  },
  machine: {
    type: 'oauth2',
    flows: {
      authorizationCode: { authorizationUrl: 'https://a.example.com/a', tokenUrl: 'https://a.example.com/t' },
      clientCredentials: { tokenUrl: 'https://auth.example.com/oauth/token', scopes: { a: '', b: '' } },
    },
  },
  relativeToken: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: {} } } },
  oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://auth.example.com/.well-known/openid-configuration' },
};

/** One GET operation per security requirement list (undefined → inherit root security). */
function securedDoc(
  perOp: Array<unknown[] | undefined>,
  rootSecurity?: unknown[],
  schemes: Record<string, unknown> = SCHEMES,
) {
  const paths: Record<string, unknown> = {};
  perOp.forEach((security, i) => {
    paths[`/op${i}`] = { get: op(`op${i}`, security === undefined ? {} : { security }) };
  });
  return oas3(paths, { components: { securitySchemes: schemes }, ...(rootSecurity ? { security: rootSecurity } : {}) });
}

async function auths(
  perOp: Array<unknown[] | undefined>,
  rootSecurity?: unknown[],
  options: Record<string, unknown> = {},
) {
  const r = await convert(securedDoc(perOp, rootSecurity), options);
  return {
    r,
    auth: r.manual.tools.map((t) => t.tool_call_template.auth),
    templates: r.manual.tools.map((t) => t.tool_call_template),
  };
}

describe('security schemes → auth (docs/design/openapi.md#security-schemes)', () => {
  it.each([
    ['api_key', 'API_KEY'],
    ['bearerAuth', 'BEARER_AUTH'],
    ['petstore_auth', 'PETSTORE_AUTH'],
    ['OAuth2', 'OAUTH2'],
    ['petStoreV2Key', 'PET_STORE_V2_KEY'],
    ['my-scheme.v2', 'MY_SCHEME_V2'],
    ['2fa', 'SCHEME_2FA'],
    ['***', 'SCHEME'],
  ])('derives the variable name of %s as %s', (key, name) => {
    expect(schemeVariableName(key)).toBe(name);
  });

  it('maps apiKey (header, query, cookie), bearer and basic', async () => {
    const { auth } = await auths([
      [{ api_key: [] }],
      [{ queryKey: [] }],
      [{ cookieKey: [] }],
      [{ bearerAuth: [] }],
      [{ basicAuth: [] }],
    ]);
    expect(auth).toEqual([
      { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-API-Key', location: 'header' },
      { auth_type: 'api_key', api_key: '${QUERY_KEY}', var_name: 'key', location: 'query' },
      { auth_type: 'api_key', api_key: '${COOKIE_KEY}', var_name: 'sid', location: 'cookie' },
      { auth_type: 'api_key', api_key: 'Bearer ${BEARER_AUTH}', var_name: 'Authorization', location: 'header' },
      { auth_type: 'basic', username: '${BASIC_AUTH_USERNAME}', password: '${BASIC_AUTH_PASSWORD}' },
    ]);
  });

  it('maps oauth2 client credentials with the scopes the requirement lists (omitted when none)', async () => {
    const { auth } = await auths([[{ machine: ['b'] }], [{ machine: [] }]]);
    expect(auth).toEqual([
      {
        auth_type: 'oauth2',
        token_url: 'https://auth.example.com/oauth/token',
        client_id: '${MACHINE_CLIENT_ID}',
        client_secret: '${MACHINE_CLIENT_SECRET}',
        scope: 'b',
      },
      {
        auth_type: 'oauth2',
        token_url: 'https://auth.example.com/oauth/token',
        client_id: '${MACHINE_CLIENT_ID}',
        client_secret: '${MACHINE_CLIENT_SECRET}',
      },
    ]);
  });

  it('maps user-obtained oauth2 flows and openIdConnect to a bearer access token', async () => {
    const { auth } = await auths([[{ petstore_auth: ['read:pets'] }], [{ oidc: [] }]]);
    expect(auth).toEqual([
      {
        auth_type: 'api_key',
        api_key: 'Bearer ${PETSTORE_AUTH_ACCESS_TOKEN}',
        var_name: 'Authorization',
        location: 'header',
      },
      { auth_type: 'api_key', api_key: 'Bearer ${OIDC_ACCESS_TOKEN}', var_name: 'Authorization', location: 'header' },
    ]);
  });

  it('uses ONE variable per scheme across 50 operations', async () => {
    const { r, auth } = await auths(
      Array.from({ length: 50 }, () => undefined),
      [{ api_key: [] }],
    );
    expect(r.manual.tools).toHaveLength(50);
    const all = JSON.stringify(r.manual.tools.map((t) => t.tool_call_template));
    expect(new Set(all.match(/\$\{[A-Z0-9_]+\}/g))).toEqual(new Set(['${API_KEY}']));
    expect(new Set(auth.map((a) => JSON.stringify(a))).size).toBe(1);
  });

  it('gives clashing derived names _2 on the later scheme', async () => {
    const schemes = {
      apiKey: { type: 'apiKey', in: 'header', name: 'A' },
      API_KEY: { type: 'apiKey', in: 'header', name: 'B' },
    };
    const r = await convert(securedDoc([[{ apiKey: [] }], [{ API_KEY: [] }]], undefined, schemes));
    expect(r.manual.tools.map((t) => (t.tool_call_template.auth as any).api_key)).toEqual([
      '${API_KEY}',
      '${API_KEY_2}',
    ]);
  });

  it('prefers operation security (even []) over root security; no security → no auth', async () => {
    const { auth } = await auths([undefined, [], [{ bearerAuth: [] }]], [{ api_key: [] }]);
    expect(auth.map((a) => (a ? (a as any).api_key : null))).toEqual(['${API_KEY}', null, 'Bearer ${BEARER_AUTH}']);
    const none = await convert(securedDoc([undefined]));
    expect(none.manual.tools[0].tool_call_template).not.toHaveProperty('auth');
  });

  it('treats {} as optional authentication → no auth', async () => {
    const { auth } = await auths([
      [{}, { api_key: [] }],
      [{ api_key: [] }, {}],
    ]);
    expect(auth[0]).toBeUndefined();
    expect((auth[1] as any).api_key).toBe('${API_KEY}');
  });

  it('sends further apiKey schemes of an AND-ed requirement as headers and query parameters', async () => {
    const { templates, r } = await auths([[{ bearerAuth: [], api_key: [], queryKey: [], cookieKey: [] }]]);
    expect(templates[0].auth).toEqual({
      auth_type: 'api_key',
      api_key: 'Bearer ${BEARER_AUTH}',
      var_name: 'Authorization',
      location: 'header',
    });
    expect(templates[0].headers).toEqual({ 'X-API-Key': '${API_KEY}' });
    expect(templates[0].url).toBe('https://api.example.com/op0?key=${QUERY_KEY}');
    expect(r.report.dropped).toContainEqual({
      location: 'GET /op0',
      construct: 'security scheme cookieKey',
      reason: expect.stringContaining('cannot be expressed'),
    });
  });

  it('skips unsupported requirements (digest, mutualTLS, undefined schemes) for the next one, else no auth + warning', async () => {
    const { auth, r } = await auths([
      [{ digestAuth: [] }, { basicAuth: [] }],
      [{ mtls: [] }],
      [{ nowhere: [] }],
      [{ api_key: [], digestAuth: [] }],
    ]);
    expect((auth[0] as any).auth_type).toBe('basic');
    expect(auth.slice(1)).toEqual([undefined, undefined, undefined]);
    expect(r.report.warnings).toEqual(
      expect.arrayContaining([
        expect.stringContaining('mtls: scheme type mutualTLS is not supported'),
        expect.stringContaining('nowhere: not defined in the spec'),
        expect.stringContaining('digestAuth: http scheme digest is not supported'),
      ]),
    );
  });

  it('aggregates one repeated security problem into a single warning line', async () => {
    const { r } = await auths(Array.from({ length: 30 }, () => [{ digestAuth: [] }]));
    const lines = r.report.warnings.filter((w) => w.includes('digest'));
    expect(lines).toEqual([expect.stringContaining('and 29 more places')]);
    expect(r.report.dropped.filter((d) => d.construct === 'security')).toHaveLength(30);
  });

  it('reads Swagger 2.0 securityDefinitions (oauth2 application flow → client credentials)', async () => {
    const doc = {
      swagger: '2.0',
      host: 'api.example.com',
      securityDefinitions: {
        app: { type: 'oauth2', flow: 'application', tokenUrl: 'https://api.example.com/token', scopes: { x: '' } },
      },
      security: [{ app: ['x'] }],
      paths: { '/a': { get: { operationId: 'a', responses: {} } } },
    };
    const r = await convert(doc);
    expect(r.manual.tools[0].tool_call_template.auth).toEqual({
      auth_type: 'oauth2',
      token_url: 'https://api.example.com/token',
      client_id: '${APP_CLIENT_ID}',
      client_secret: '${APP_CLIENT_SECRET}',
      scope: 'x',
    });
  });
});

describe('tokenUrl rules (docs/design/security.md#attack-cases OpenAPI)', () => {
  const tokenDoc = (tokenUrl: string) =>
    securedDoc([[{ cc: [] }]], undefined, {
      cc: { type: 'oauth2', flows: { clientCredentials: { tokenUrl, scopes: {} } } },
    });
  const tokenUrlOf = async (tokenUrl: string, specUrl?: string) =>
    ((await convert(tokenDoc(tokenUrl), { specUrl })).manual.tools[0].tool_call_template.auth as any).token_url;

  it.each(['http://169.254.169.254/token', 'http://attacker.example/token'])(
    'drops a scheme whose tokenUrl is %s, with a report line; the rest converts',
    async (url) => {
      const doc = tokenDoc(url);
      (doc.paths as any)['/other'] = {
        get: { operationId: 'other', security: [{ key: [] }], responses: { '200': { description: 'ok' } } },
      };
      (doc.components as any).securitySchemes.key = { type: 'apiKey', in: 'header', name: 'X-Key' };
      const r = await convert(doc, { specUrl: 'https://api.example.com/spec.json' });
      expect(r.manual.tools.map((t) => t.name)).toEqual(['op0', 'other']);
      expect(r.manual.tools[0].tool_call_template).not.toHaveProperty('auth');
      expect(JSON.stringify(r.manual)).not.toContain(new URL(url).host);
      expect((r.manual.tools[1].tool_call_template.auth as any).var_name).toBe('X-Key');
      expect(r.report.dropped).toContainEqual({
        location: 'securitySchemes.cc',
        construct: 'security scheme cc',
        reason: expect.stringContaining('OAuth2 tokenUrl'),
      });
    },
  );

  it('accepts a legitimate https tokenUrl', async () => {
    expect(await tokenUrlOf('https://auth.example.com/oauth/token', 'https://api.example.com/spec.json')).toBe(
      'https://auth.example.com/oauth/token',
    );
  });

  it('resolves a relative tokenUrl against an https spec URL', async () => {
    expect(await tokenUrlOf('/oauth/token', 'https://api.example.com/spec.json')).toBe(
      'https://api.example.com/oauth/token',
    );
  });

  it('resolves a scheme-relative tokenUrl to https', async () => {
    expect(await tokenUrlOf('//auth.example.com/oauth/token', 'https://api.example.com/spec.json')).toBe(
      'https://auth.example.com/oauth/token',
    );
  });

  it('resolves //localhost/… against an http loopback spec to http://localhost/…', async () => {
    expect(await tokenUrlOf('//localhost/oauth/token', 'http://127.0.0.1:8080/spec.json')).toBe(
      'http://localhost/oauth/token',
    );
  });

  it('leaves a relative tokenUrl unchanged without a spec URL, with a warning', async () => {
    const r = await convert(tokenDoc('/oauth/token'));
    expect((r.manual.tools[0].tool_call_template.auth as any).token_url).toBe('/oauth/token');
    expect(r.report.warnings).toContainEqual(expect.stringContaining('relative tokenUrl "/oauth/token"'));
  });

  it('fails a remote https spec whose tokenUrl //localhost/… resolves to a loopback host', async () => {
    await expect(
      convert(tokenDoc('//localhost/oauth/token'), { specUrl: 'https://api.example.com/spec.json' }),
    ).rejects.toThrow(/loopback/);
  });

  it('fails a remote spec with an absolute loopback tokenUrl', async () => {
    await expect(
      convert(tokenDoc('http://127.0.0.1:9/token'), { specUrl: 'https://api.example.com/spec.json' }),
    ).rejects.toThrow(/OAuth2 tokenUrl.*loopback/);
  });
});

describe('auth_tools (docs/design/openapi.md#security-schemes)', () => {
  it('replaces a compatible generated auth with the raw auth_tools object', async () => {
    const authTools = { auth_type: 'api_key', api_key: '${MY_TOKEN}', var_name: 'x-api-key', location: 'header' };
    const { auth } = await auths([[{ api_key: [] }], []], undefined, { authTools });
    expect(auth).toEqual([authTools, undefined]);
  });

  it('treats a missing var_name/location as the api_key defaults (X-Api-Key, header)', async () => {
    const authTools = { auth_type: 'api_key', api_key: '${T}' };
    const { auth } = await auths([[{ api_key: [] }]], undefined, { authTools });
    expect(auth[0]).toEqual(authTools);
  });

  it('keeps the generated auth (with one warning) when auth_tools is incompatible', async () => {
    const authTools = { auth_type: 'api_key', api_key: '${T}', var_name: 'Authorization', location: 'header' };
    const { auth, r } = await auths([[{ api_key: [] }], [{ queryKey: [] }], [{ basicAuth: [] }]], undefined, {
      authTools,
    });
    expect(auth.map((a: any) => a.api_key ?? a.auth_type)).toEqual(['${API_KEY}', '${QUERY_KEY}', 'basic']);
    expect(r.report.warnings.filter((w) => w.includes('auth_tools'))).toHaveLength(3);
  });

  it('applies an oauth2 auth_tools to generated oauth2 auth', async () => {
    const authTools = {
      auth_type: 'oauth2',
      token_url: 'https://idp.example.com/t',
      client_id: '${ID}',
      client_secret: '${SECRET}',
      scope: 'all',
    };
    const { auth } = await auths([[{ machine: ['a'] }]], undefined, { authTools });
    expect(auth[0]).toEqual(authTools);
  });
});
