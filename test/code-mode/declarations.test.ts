/** `toolsAsTypeScript`: the declarations compile, and type-check the calls a script makes (docs/design/code-mode.md#declarations). */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { registerCodeMode, toolsAsTypeScript, toolToTypeScriptInterface } from '../../src/code-mode/index.js';

async function catalog(): Promise<UtcpClient> {
  const client = await UtcpClient.create({});
  onTestFinished(() => client.close());
  await client.registerFunctions('weather', [
    {
      name: 'forecast',
      description: 'Forecast for a city. Ends a comment: */ and goes on\nover lines.',
      inputs: {
        type: 'object',
        properties: {
          city: { type: 'string', description: 'City name' },
          days: { type: 'integer', minimum: 1, maximum: 14, default: 3 },
          units: { enum: ['metric', 'imperial'] },
          at: { type: ['string', 'null'], format: 'date-time' },
          coords: {
            type: 'object',
            properties: { lat: { type: 'number' }, lon: { type: 'number' } },
            required: ['lat', 'lon'],
          },
          tags: { type: 'array', items: { type: 'string' } },
          extra: { type: 'object', additionalProperties: { type: 'number' } },
          either: { anyOf: [{ type: 'string' }, { type: 'object', properties: { id: { type: 'integer' } } }] },
          'odd-key': { type: 'boolean' },
        },
        required: ['city'],
      },
      outputs: { type: 'object', properties: { temps: { type: 'array', items: { type: 'number' } } } },
      handler: () => ({ temps: [] }),
    },
    { name: 'odd-name', handler: () => 1 },
  ]);
  await client.registerFunctions('my-api', [
    {
      name: 'ping',
      inputs: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      handler: () => 'pong',
    },
  ]);
  return client;
}

/** Type-checks `source` (strict) and returns the error messages. */
async function typeErrors(source: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'code-mode-decl-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'script.ts');
  await writeFile(file, source);
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
  });
  return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

const USE = `
async function main() {
  const f = await weather.forecast({ city: 'Oslo', days: 2, units: 'metric', at: null, coords: { lat: 1, lon: 2 }, either: { id: 1 }, 'odd-key': true });
  const t: number[] | undefined = f.temps;
  await weather['odd-name']({});
  await my_api.ping({ n: 1 });
  return t;
}
export {};
`;

describe('toolsAsTypeScript', () => {
  it('produces declarations that compile and accept correct calls, with JSDoc from descriptions and schemas', async () => {
    const client = await catalog();
    const text = await toolsAsTypeScript(client);
    expect(text).toContain('declare const weather: {');
    expect(text).toContain('declare const my_api: {');
    expect(text).toContain('/** City name */');
    expect(text).toContain('@maximum 14');
    expect(text).not.toMatch(/\*\/ and goes on/);
    expect(await typeErrors(`${text}\n${USE}`)).toEqual([]);
  });

  it('rejects wrong calls when type-checked (the types are real, not `any`)', async () => {
    const client = await catalog();
    const text = await toolsAsTypeScript(client);
    const errors = await typeErrors(
      `${text}\nasync function main() { await weather.forecast({ days: 2 }); await weather.forecast({ city: 'x', units: 'kelvin' }); await my_api.ping({ n: 'one' }); }\nexport {};`,
    );
    expect(errors).toHaveLength(3);
  });

  it('selects tools by names, globs or a list of found tools (search first for large catalogs)', async () => {
    const client = await catalog();
    expect(await toolsAsTypeScript(client, ['my_api.*'])).toMatch(/^declare const my_api: \{\n[\s\S]*ping\(/);
    const found = await client.searchTools('forecast city', { limit: 1 });
    const text = await toolsAsTypeScript(client, found);
    expect(text).toContain('forecast(args:');
    expect(text).not.toContain('ping(');
    expect(toolToTypeScriptInterface(found[0])).toBe(text);
  });

  it('registerCodeMode: run carries the declarations of a small catalog; describe answers a search with them', async () => {
    const client = await catalog();
    await registerCodeMode(client);
    const run = (await client.getTools()).find((t) => t.name === 'code_mode.run')!;
    expect(run.description).toContain('forecast(args:');
    const described = await client.callTool('code_mode.describe', { query: 'ping' });
    expect(described).toContain('ping(args: {');
    expect(described).not.toContain('code_mode');
    const out = await client.callTool('code_mode.run', { code: 'return await my_api.ping({ n: 1 })' });
    expect(out).toMatchObject({ result: 'pong', calls: [{ tool: 'my_api.ping', ok: true }] });
  });
});
