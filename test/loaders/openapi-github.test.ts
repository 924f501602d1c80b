import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { convertOpenApiSpec, type OpenApiConversion } from '../../src/loaders/openapi/index.js';
import { collectRefs, resolveInside } from './openapi-refs.js';

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

describe('the real GitHub REST spec (@octokit/openapi)', () => {
  let doc: Record<string, any>;
  let result: OpenApiConversion;

  beforeAll(() => {
    const require = createRequire(import.meta.url);
    const dir = join(require.resolve('@octokit/openapi/package.json'), '..', 'generated');
    doc = JSON.parse(readFileSync(join(dir, 'api.github.com.json'), 'utf8'));
    result = convertOpenApiSpec(doc, { manualName: 'github', specUrl: 'https://raw.githubusercontent.com/github/rest-api-description/main/api.github.com.json' });
  }, 60_000);

  it('turns every operation into a tool', () => {
    let operations = 0;
    for (const item of Object.values(doc.paths) as Record<string, unknown>[]) operations += Object.keys(item).filter((k) => METHODS.includes(k)).length;
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
    for (const t of result.manual.tools) {
      for (const [which, schema] of [['inputs', t.inputs], ['outputs', t.outputs]] as const) {
        for (const r of collectRefs(schema)) {
          refs++;
          if (resolveInside(schema, r.ref) === undefined) dangling.push(`${t.name}.${which} ${r.ref} at ${r.at}`);
        }
      }
    }
    expect(dangling).toEqual([]);
    // Schema positions never point at the spec's components (example values are data and may).
    expect(collectRefs(result.manual.tools.map((t) => [t.inputs, t.outputs])).filter((r) => r.ref.startsWith('#/components/'))).toEqual([]);
    expect(refs).toBe(collectRefs(result.manual.tools.map((t) => [t.inputs, t.outputs])).length);
  });

  it('targets api.github.com with path placeholders and component parameters resolved', () => {
    const get = result.manual.tools.find((t) => t.name === 'repos_get')!;
    expect(get.tool_call_template).toMatchObject({ http_method: 'GET', url: 'https://api.github.com/repos/{owner}/{repo}', body_field: null, auth: null });
    expect(get.inputs.required).toEqual(['owner', 'repo']);
    expect((get.inputs.properties as any).owner).toEqual({ type: 'string', description: 'The account owner of the repository. The name is not case sensitive.' });
    expect((get.outputs as any).properties.full_name).toMatchObject({ type: 'string' });
    const create = result.manual.tools.find((t) => t.name === 'issues_create')!;
    expect(create.tool_call_template).toMatchObject({ http_method: 'POST', body_field: 'body', content_type: 'application/json' });
    expect((create.inputs.properties as any).body.required).toEqual(['title']);
  });

  it('leaves the spec untouched', () => {
    expect(doc.paths['/repos/{owner}/{repo}'].get.parameters[0]).toEqual({ $ref: '#/components/parameters/owner' });
  });
});
