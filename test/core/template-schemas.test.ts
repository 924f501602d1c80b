import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { builtinTransports } from '../../src/transports/builtin.js';

// The template validator compiles these schemas without Ajv's own meta-schema check (a cold-start cost);
// this test is that check, for every built-in transport.
describe('built-in call template schemas', () => {
  const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false, logger: false });
  ajv.addKeyword({ keyword: 'x-utcp-auth', schemaType: 'boolean' });

  for (const [type, definition] of Object.entries(builtinTransports)) {
    it(`${type}: valid against the JSON Schema 2020-12 meta-schema and compiles in strict mode`, async () => {
      const spec = await definition.template!();
      const valid = ajv.validateSchema(spec.schema as object);
      expect(ajv.errors ?? [], `${type}: ${ajv.errorsText(ajv.errors)}`).toEqual([]);
      expect(valid).toBe(true);
      expect(() => ajv.compile(spec.schema as object)).not.toThrow();
    });
  }

  it('rejects a schema that breaks the meta-schema (the check can fail)', () => {
    expect(ajv.validateSchema({ type: 'object', properties: { a: { type: 'no-such-type' } } })).toBe(false);
  });
});
