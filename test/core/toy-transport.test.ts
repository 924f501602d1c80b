/**
 * Adding a transport touches its folder and one line of the transport list (docs/design/adding-a-transport.md).
 * The toy transport lives in test/fixtures/toy-transport/ and is passed exactly as a line of
 * src/transports/builtin.ts would list it: the client validates its template from the transport's own schema,
 * applies its legacy hook, and calls it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { UtcpClient, UtcpValidationError, type TransportDefinition } from '../../src/index.js';
import type { ToyEchoCallTemplate } from '../fixtures/toy-transport/template.js';

const toyEcho: TransportDefinition<ToyEchoCallTemplate> = {
  template: async () => (await import('../fixtures/toy-transport/template.js')).template,
  create: async (ctx) => (await import('../fixtures/toy-transport/index.js')).createToyEchoTransport(ctx),
  legacyTypes: ['toy'],
};

let client: UtcpClient | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function createClient(): Promise<UtcpClient> {
  client = await UtcpClient.create({}, { transports: { toy_echo: toyEcho } });
  return client;
}

describe('a transport added through the transport list', () => {
  it('registers and calls a valid template', async () => {
    const c = await createClient();
    const result = await c.registerManual({
      name: 'toy',
      call_template_type: 'toy_echo',
      prefix: '>> ',
      uppercase: true,
    });
    expect(result.errors).toEqual([]);
    expect(result.success).toBe(true);
    expect((await c.getTools()).map((t) => t.name)).toEqual(['toy.echo']);
    await expect(c.callTool('toy.echo', { a: 'x' })).resolves.toBe('>> {"A":"X"}');
  });

  it('rejects a bad manual template, naming the field, from the transport schema', async () => {
    const c = await createClient();
    const missing = await c.registerManual({ name: 'toy', call_template_type: 'toy_echo' });
    expect(missing.success).toBe(false);
    expect(missing.errors).toEqual(['Invalid manual call template: prefix: required']);
    const wrong = await c.registerManual({
      name: 'toy',
      call_template_type: 'toy_echo',
      prefix: ' ',
      uppercase: 'yes',
    });
    expect(wrong.errors).toEqual([
      'Invalid manual call template: prefix: must not be empty; uppercase: expected a boolean, got string',
    ]);
    const auth = await c.registerManual({
      name: 'toy',
      call_template_type: 'toy_echo',
      prefix: 'p',
      auth: { auth_type: 'basic', username: 'u', password: 'p' },
    });
    expect(auth.errors).toEqual(['Invalid manual call template: auth: must be null for toy_echo templates']);
    expect(await c.getTools()).toEqual([]);
  });

  it('throws INVALID_MANUAL naming the field where the API throws', async () => {
    const c = await createClient();
    const error = await c
      .getRequiredVariablesForManualAndTools({ name: 'toy', call_template_type: 'toy_echo', tool_names: ['ok', ''] })
      .catch((e) => e);
    expect(error).toBeInstanceOf(UtcpValidationError);
    expect(error).toMatchObject({ code: 'INVALID_MANUAL' });
    expect(error.issues.map((i: { path: string; message: string }) => `${i.path}: ${i.message}`)).toEqual([
      'prefix: required',
      'tool_names[1]: must not be empty',
    ]);
  });

  it('validates the templates of discovered tools with the same schema (a bad tool is skipped, naming its path)', async () => {
    const c = await createClient();
    const manual = {
      tools: [
        { name: 'good', tool_call_template: { call_template_type: 'toy_echo', prefix: 'g:' } },
        { name: 'bad', tool_call_template: { call_template_type: 'toy_echo', uppercase: 1 } },
      ],
    };
    const result = await c.registerManual({
      name: 'doc',
      call_template_type: 'text',
      content: JSON.stringify(manual),
      allowed_communication_protocols: ['toy_echo'],
    });
    expect(result.success).toBe(true);
    expect(result.manual.tools.map((t) => t.name)).toEqual(['doc.good']);
    expect(result.warnings.join('\n')).toContain(
      'tools[1].tool_call_template.prefix: required; tools[1].tool_call_template.uppercase: expected a boolean, got number',
    );
    await expect(c.callTool('doc.good', { n: 1 })).resolves.toBe('g:{"n":1}');
  });

  it('applies the transport legacy hook and its legacy type name', async () => {
    const c = await createClient();
    const result = await c.registerManual({ name: 'old', provider_type: 'toy', label: '# ' });
    expect(result.success).toBe(true);
    expect(result.manualCallTemplate).toMatchObject({ call_template_type: 'toy_echo', prefix: '# ' });
    expect(result.warnings.join('\n')).toMatch(
      /legacy type "toy" mapped to "toy_echo"[\s\S]*legacy "label" renamed to "prefix"/,
    );
    await expect(c.callTool('old.echo', {})).resolves.toBe('# {}');
  });

  it('still validates only the base fields for a transport given as a bare factory (no template spec)', async () => {
    const { createToyEchoTransport } = await import('../fixtures/toy-transport/index.js');
    client = await UtcpClient.create({}, { transports: { bare: createToyEchoTransport } });
    const result = await client.registerManual({ name: 'b', call_template_type: 'bare', prefix: 'b:' });
    expect(result.success).toBe(true);
    const base = await client.registerManual({
      name: 'c',
      call_template_type: 'bare',
      allowed_communication_protocols: 'x',
    });
    expect(base.errors).toEqual([
      'Invalid manual call template: allowed_communication_protocols: expected an array of strings, got string',
    ]);
  });
});
