/**
 * The built package validates built-in templates with validators generated at build time
 * (docs/design/performance.md#precompiled-templates). They must report exactly what the run-time Ajv compile
 * reports, be used only for the schema they were generated from, and spare a registration the Ajv import.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = resolve(__dirname, '../../dist');
const built = existsSync(resolve(DIST, 'transports/precompiled/http.js'));
const load = (path: string) => import(pathToFileURL(resolve(DIST, path)).href);

/** Values of every JSON type, and a few that fail common keywords (pattern, minItems, enum, minimum). */
const PROBES: unknown[] = [42, -1, 1.5, 'x', '', ' ', null, true, [], ['x'], [1], {}, { a: 1 }, { auth_type: 'basic' }];

describe.runIf(built)('precompiled template validators (built package)', async () => {
  const { builtinTransports } = await load('transports/builtin.js');
  const { compileTemplate } = await load('core/template-validator.js');

  for (const [type, definition] of Object.entries<any>(builtinTransports)) {
    it(`${type}: same issues as the run-time Ajv compile, on every field × every probe value`, async () => {
      const spec = await definition.template();
      const fast = await compileTemplate(spec, () => definition.precompiledTemplate());
      const slow = await compileTemplate({ ...spec }); // another spec object: compiled by Ajv at run time
      const issues = (c: any, t: object) => {
        const out: unknown[] = [];
        c.validate(t, 'tpl', out);
        return out;
      };
      let compared = 0;
      let failing = 0;
      const fields = Object.keys(spec.schema.properties ?? {});
      for (const field of [...fields, 'not_a_field']) {
        for (const probe of PROBES) {
          const template = { call_template_type: type, [field]: probe };
          const a = issues(fast, template);
          expect(a, `${type}.${field} = ${JSON.stringify(probe)}`).toEqual(issues(slow, template));
          compared++;
          if (a.length > 0) failing++;
        }
      }
      expect(compared).toBeGreaterThan(PROBES.length);
      expect(failing).toBeGreaterThan(0); // the probes do reach refusals
    });
  }

  it('is not used for a schema other than the one it was generated from', async () => {
    const definition = builtinTransports.http;
    const spec = await definition.template();
    const changed = {
      ...spec,
      schema: {
        ...spec.schema,
        required: [...spec.schema.required, 'extra_field'],
        properties: { ...spec.schema.properties, extra_field: { type: 'string' } },
      },
    };
    const compiled = await compileTemplate(changed, () => definition.precompiledTemplate());
    const out: { path: string; message: string }[] = [];
    compiled.validate({ call_template_type: 'http', url: 'https://example.test/' }, '', out);
    expect(out).toEqual([{ path: 'extra_field', message: 'required' }]);
  });

  it('a registration in a fresh process validates http templates without importing Ajv', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { UtcpClient } = await import(${JSON.stringify(pathToFileURL(resolve(DIST, 'index.js')).href)});
      const client = await UtcpClient.create();
      const tools = [
        { name: 'ok', tool_call_template: { call_template_type: 'http', url: 'https://example.test/a' } },
        { name: 'bad', tool_call_template: { call_template_type: 'http', url: '', http_method: 'FETCH' } },
      ];
      const r = await client.registerManual({ name: 'm', call_template_type: 'text',
        content: JSON.stringify({ utcp_version: '1.0.0', tools }), allowed_communication_protocols: ['http'] });
      await client.close();
      const ajv = Object.keys(createRequire(import.meta.url).cache).filter((f) => /[\\\\/]ajv[\\\\/]/.test(f));
      console.log(JSON.stringify({ tools: r.manual.tools.map((t) => t.name), warnings: r.warnings, ajv: ajv.length }));
    `;
    const out = JSON.parse(
      execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 }),
    );
    expect(out.tools).toEqual(['m.ok']);
    expect(out.warnings.join('\n')).toContain('tools[1].tool_call_template.url: must not be empty');
    expect(out.warnings.join('\n')).toContain('tools[1].tool_call_template.http_method: must be one of');
    expect(out.ajv).toBe(0);
  });
});

describe('template validators and their call options', () => {
  it('keeps dynamic scope for a schema with dynamic anchors (the shared call options are not given to it)', async () => {
    const { compileTemplate } = await import('../../src/core/template-validator.js');
    // JSON Schema's extension pattern: "strict-tree" extends "tree", and the items of `children` are resolved through
    // the dynamic scope to "strict-tree", so unknown properties are refused at every depth. The validator records the
    // scope in its call options; with frozen shared options it would fall back to "tree" and accept them.
    const spec = {
      type: 'tree',
      schema: {
        $id: 'https://example.test/strict-tree',
        $dynamicAnchor: 'node',
        type: 'object',
        $ref: 'tree',
        unevaluatedProperties: false,
        $defs: {
          tree: {
            $id: 'https://example.test/tree',
            $dynamicAnchor: 'node',
            type: 'object',
            properties: {
              call_template_type: true,
              data: true,
              children: { type: 'array', items: { $dynamicRef: '#node' } },
            },
          },
        },
      },
    };
    const compiled = await compileTemplate(spec as never);
    const issues = (t: object) => {
      const out: { path: string; message: string }[] = [];
      compiled.validate(t as never, 'tpl', out);
      return out.length;
    };
    for (let round = 0; round < 3; round++) {
      expect(issues({ call_template_type: 'tree', data: 1, children: [{ data: 2 }] })).toBe(0);
      expect(issues({ call_template_type: 'tree', children: [{ daat: 2 }] })).toBeGreaterThan(0);
    }
  });
});
