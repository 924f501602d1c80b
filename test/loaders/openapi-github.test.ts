import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { convertOpenApiSpec, type OpenApiConversion } from '../../src/loaders/openapi/convert-open-api-spec.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { collectRefs, resolveInside } from './openapi-refs.js';
import { createSchemaChecker, findOpenApiKeywords } from './schema-check.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

describe('the real GitHub REST spec (@octokit/openapi)', () => {
  let doc: Record<string, any>;
  let result: OpenApiConversion;

  beforeAll(() => {
    const require = createRequire(import.meta.url);
    const dir = join(require.resolve('@octokit/openapi/package.json'), '..', 'generated');
    doc = JSON.parse(readFileSync(join(dir, 'api.github.com.json'), 'utf8'));
    result = convertOpenApiSpec(doc, {
      manualName: 'github',
      specUrl: 'https://raw.githubusercontent.com/github/rest-api-description/main/api.github.com.json',
    });
  }, 60_000);

  it('turns every operation into a tool', () => {
    let operations = 0;
    for (const item of Object.values(doc.paths) as Record<string, unknown>[])
      operations += Object.keys(item).filter((k) => METHODS.includes(k)).length;
    expect(operations).toBeGreaterThan(1000);
    expect(result.report.counts).toEqual({ operations, tools: operations, skipped: 0, filtered: 0 });
    expect(result.manual.tools).toHaveLength(operations);
  });

  it('produces unique, valid names from the operationIds', () => {
    const names = result.manual.tools.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(names).toContain('repos_get');
    expect(names).toContain('issues_create');
  });

  it('resolves every $ref inside each tool schema', () => {
    let refs = 0;
    const dangling: string[] = [];
    const outside: string[] = [];
    for (const t of result.manual.tools) {
      for (const [which, schema] of [
        ['inputs', t.inputs],
        ['outputs', t.outputs],
      ] as const) {
        for (const r of collectRefs(schema)) {
          refs++;
          if (resolveInside(schema, r.ref) === undefined) dangling.push(`${t.name}.${which} ${r.ref} at ${r.at}`);
          if (!r.ref.startsWith('#/$defs/')) outside.push(`${t.name}.${which} ${r.ref} at ${r.at}`);
        }
      }
    }
    expect(dangling).toEqual([]);
    // Schema positions never point at the spec's components (example values are data and may).
    expect(
      collectRefs(result.manual.tools.map((t) => [t.inputs, t.outputs])).filter((r) =>
        r.ref.startsWith('#/components/'),
      ),
    ).toEqual([]);
    // Every ref of a tool schema points into that schema's own `$defs`.
    expect(outside).toEqual([]);
    expect(refs).toBeGreaterThan(0);
  });

  it('targets api.github.com with path placeholders and component parameters resolved', () => {
    const get = result.manual.tools.find((t) => t.name === 'repos_get')!;
    expect(get.tool_call_template).toMatchObject({
      http_method: 'GET',
      url: 'https://api.github.com/repos/{owner}/{repo}',
    });
    expect(get.tool_call_template).not.toHaveProperty('auth');
    expect(get.tool_call_template).not.toHaveProperty('body_field');
    expect(get.inputs.required).toEqual(['owner', 'repo']);
    expect((get.inputs.properties as any).owner).toEqual({
      type: 'string',
      description: 'The account owner of the repository. The name is not case sensitive.',
    });
    expect((get.outputs as any).properties.full_name).toMatchObject({ type: 'string' });
    const create = result.manual.tools.find((t) => t.name === 'issues_create')!;
    expect(create.tool_call_template).toMatchObject({
      http_method: 'POST',
      body_field: 'body',
      content_type: 'application/json',
    });
    expect((create.inputs.properties as any).body.required).toEqual(['title']);
  });

  it('passes the 2020-12 meta-schema everywhere, keeps no OpenAPI keyword, and compiles in MCP-host Ajv (sample)', () => {
    const meta = new Ajv2020({ strict: false, logger: false }).getSchema(
      'https://json-schema.org/draft/2020-12/schema',
    )!;
    const bad: string[] = [];
    for (const t of result.manual.tools) {
      for (const [which, schema] of [
        ['inputs', t.inputs],
        ['outputs', t.outputs],
      ] as const) {
        if (!meta(schema))
          bad.push(`${t.name}.${which}: ${meta.errors?.[0]?.instancePath} ${meta.errors?.[0]?.message}`);
        for (const at of findOpenApiKeywords(schema)) bad.push(`${t.name}.${which}: OpenAPI keyword at ${at}`);
      }
    }
    expect(bad).toEqual([]);
    // Ajv compilation is slow (~30 ms a schema): every 100th tool plus the ones issue #13 names.
    const checker = createSchemaChecker();
    const sample = result.manual.tools.filter(
      (t, i) => i % 100 === 0 || ['issues_update', 'repos_get', 'issues_create'].includes(t.name),
    );
    const failures = sample.flatMap((t) =>
      [...checker.check(t.inputs), ...checker.check(t.outputs)].map((p) => `${t.name}: ${p.kind} ${p.message}`),
    );
    expect(failures).toEqual([]);
    expect(result.report.changed.filter((c) => c.construct === 'nullable').length).toBeGreaterThan(300);
  }, 120_000);

  it('accepts { body: { milestone: null } } for issues_update (GitHub clears a milestone with null)', () => {
    const update = result.manual.tools.find((t) => t.name === 'issues_update')!;
    const validate = new Ajv2020({ strict: false, logger: false }).compile(update.inputs);
    const base = { owner: 'o', repo: 'r', issue_number: 1 };
    expect(validate({ ...base, body: { milestone: null } })).toBe(true);
    expect(validate({ ...base, body: { milestone: 3 } })).toBe(true);
    expect(validate({ ...base, body: { milestone: { no: 1 } } })).toBe(false);
  });

  it('leaves the spec untouched', () => {
    expect(doc.paths['/repos/{owner}/{repo}'].get.parameters[0]).toEqual({ $ref: '#/components/parameters/owner' });
  });
});
