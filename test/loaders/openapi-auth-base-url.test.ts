/**
 * Auth for specs without schemes and the base-URL variable, through UtcpClient and the http transport against a local
 * server (issue 13 items 3 and 4; docs/design/openapi.md#manual-auth, docs/design/openapi.md#base-url-variable).
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpClient, UtcpVariableNotFoundError } from '../../src/index.js';

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const ROOT = join(__dirname, '..', '..');
const received: Received[] = [];
let server: ReturnType<typeof createServer>;
let base = '';
const plainSpec = {
  openapi: '3.0.3',
  info: { title: 'Plain', version: '1' },
  servers: [{ url: '/api/v3' }],
  paths: {
    '/pet/{petId}': {
      get: {
        operationId: 'getPet',
        parameters: [{ name: 'petId', in: 'path', required: true, schema: { type: 'integer' } }],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/health': { get: { operationId: 'health', security: [], responses: { '200': { description: 'ok' } } } },
    '/keyed': {
      get: { operationId: 'keyed', security: [{ key: [] }], responses: { '200': { description: 'ok' } } },
    },
  },
  components: { securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } } },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      if (req.url === '/openapi.json') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(plainSpec));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, method: req.method }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe('a local server playing GitHub: the real GitHub spec, no security schemes, a bearer token from a variable', () => {
  let client: UtcpClient;
  const githubSpec = join(
    dirname(createRequire(import.meta.url).resolve('@octokit/openapi/package.json')),
    'generated',
    'api.github.com.json',
  );
  const template = () => ({
    name: 'github',
    call_template_type: 'file' as const,
    file_path: relative(ROOT, githubSpec),
    base_url: base, // the spec's https://api.github.com, overridden to loopback
    auth_tools: {
      auth_type: 'api_key' as const,
      api_key: 'Bearer ${GITHUB_TOKEN}',
      var_name: 'Authorization',
      location: 'header' as const,
    },
    openapi_filter: { include_tags: ['issues'] },
  });

  beforeAll(async () => {
    expect(JSON.parse(readFileSync(githubSpec, 'utf8')).components.securitySchemes).toBeUndefined();
    client = await UtcpClient.create({ variables: { github_GITHUB_TOKEN: 'ghp_secret123' } }, { rootDir: ROOT });
    const r = await client.registerManual(template());
    expect(r.success, r.errors.join('; ')).toBe(true);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
  });

  it('sends Authorization: Bearer <GITHUB_TOKEN> on the wire and accepts { milestone: null }', async () => {
    const result = await client.callTool('github.issues_update', {
      owner: 'octo',
      repo: 'hello',
      issue_number: 7,
      body: { milestone: null },
    });
    expect(result).toEqual({ ok: true, method: 'PATCH' });
    const r = received.at(-1)!;
    expect(r.method).toBe('PATCH');
    expect(r.url).toBe('/repos/octo/hello/issues/7');
    expect(r.headers.authorization).toBe('Bearer ghp_secret123');
    expect(JSON.parse(r.body)).toEqual({ milestone: null });
  });

  it('stores the ${VAR} reference, never the token, and lists the variable', async () => {
    const tool = await client.getTool('github.issues_update');
    expect(tool!.tool_call_template).toMatchObject({ auth: { api_key: 'Bearer ${GITHUB_TOKEN}' } });
    expect(JSON.stringify(await client.getTools())).not.toContain('ghp_secret123');
    expect(await client.getRequiredVariablesForRegisteredTool('github.issues_update')).toEqual(['github_GITHUB_TOKEN']);
    expect(await client.getRequiredVariablesForManualAndTools({ ...template(), name: 'github2' })).toEqual([
      'github2_GITHUB_TOKEN',
    ]);
  }, 60_000);
});

describe("the http manual template's own auth and headers for a spec without schemes", () => {
  let client: UtcpClient;

  beforeAll(async () => {
    client = await UtcpClient.create({ variables: { plain_TOKEN: 'tok-9', plain_KEY: 'key-1' } });
    const r = await client.registerManual({
      name: 'plain',
      call_template_type: 'http',
      url: `${base}/openapi.json`,
      auth: { auth_type: 'api_key', api_key: 'Bearer ${TOKEN}', var_name: 'Authorization', location: 'header' },
      headers: { 'X-Client': 'utcp-kit', 'X-Api-Key': 'literal-secret', Accept: 'application/yaml' },
    });
    expect(r.success, r.errors.join('; ')).toBe(true);
    expect(r.warnings).toContainEqual(expect.stringContaining('header X-Api-Key'));
  });

  afterAll(async () => {
    await client?.close();
  });

  it('fills operations the spec leaves without auth; security: [] stays public; spec schemes win', async () => {
    await client.callTool('plain.getPet', { petId: 1 });
    let r = received.at(-1)!;
    expect(r.url).toBe('/api/v3/pet/1');
    expect(r.headers.authorization).toBe('Bearer tok-9');
    expect(r.headers['x-client']).toBe('utcp-kit');
    expect(r.headers['x-api-key']).toBeUndefined(); // a literal secret is never copied into tools
    expect(r.headers.accept).not.toBe('application/yaml');
    await client.callTool('plain.health', {});
    expect(received.at(-1)!.headers.authorization).toBeUndefined();
    await client.callTool('plain.keyed', {});
    expect(received.at(-1)!.headers['x-key']).toBe('key-1');
    expect(received.at(-1)!.headers.authorization).toBeUndefined();
    await client.deregisterManual('plain');
    const again = await client.registerManual({
      name: 'plain',
      call_template_type: 'http',
      url: `${base}/openapi.json`,
      openapi_auth: 'override',
      auth: { auth_type: 'api_key', api_key: 'Bearer ${TOKEN}', var_name: 'Authorization', location: 'header' },
    });
    expect(again.success).toBe(true);
    await client.callTool('plain.keyed', {});
    r = received.at(-1)!;
    expect(r.headers.authorization).toBe('Bearer tok-9');
    expect(r.headers['x-key']).toBeUndefined();
  });
});

describe('a relative server URL without a spec URL: the ${BASE_URL} variable', () => {
  let client: UtcpClient;
  const template = { name: 'petstore', call_template_type: 'text' as const, content: JSON.stringify(plainSpec) };

  beforeAll(async () => {
    client = await UtcpClient.create({});
    const r = await client.registerManual(template);
    expect(r.success, r.errors.join('; ')).toBe(true);
    expect(r.warnings).toContainEqual(expect.stringContaining('set petstore_BASE_URL'));
  });

  afterAll(async () => {
    await client?.close();
  });

  it('turns every operation into a tool and names the variable', async () => {
    expect((await client.getTools()).map((t) => t.name).sort()).toEqual([
      'petstore.getPet',
      'petstore.health',
      'petstore.keyed',
    ]);
    expect((await client.getTool('petstore.getPet'))!.tool_call_template).toMatchObject({
      url: '${BASE_URL}/api/v3/pet/{petId}',
    });
    expect(await client.getRequiredVariablesForManualAndTools({ ...template, name: 'petstore2' })).toEqual([
      'petstore2_BASE_URL',
      'petstore2_KEY',
    ]);
  });

  it('fails a call without it with UtcpVariableNotFoundError naming it, and reaches the API with it', async () => {
    const error = await client.callTool('petstore.getPet', { petId: 3 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpVariableNotFoundError);
    expect((error as UtcpVariableNotFoundError).variableName).toBe('petstore_BASE_URL');
    const withVar = await UtcpClient.create({ variables: { petstore_BASE_URL: base } });
    try {
      expect((await withVar.registerManual(template)).success).toBe(true);
      await expect(withVar.callTool('petstore.getPet', { petId: 3 })).resolves.toEqual({ ok: true, method: 'GET' });
      expect(received.at(-1)!.url).toBe('/api/v3/pet/3');
    } finally {
      await withVar.close();
    }
  });
});
