/**
 * docs/design/threat-model.md#typed-errors-only. Hostile inputs thrown at the public API: configs and limits,
 * per-call deadlines, tool arguments, manuals (URLs, headers, ports, timeouts, schemas), search options. Whatever
 * goes wrong must come back as a `UtcpError` (a stable `code`), never as a raw RangeError/TypeError/SyntaxError,
 * and the host must stay up. Every address is on 127.0.0.1 (port 1 refuses at once) or invalid before any I/O.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient, UtcpError } from './packed.js';

const HOSTILE_NUMBERS: unknown[] = [Infinity, -Infinity, -1, NaN, 1e20, 2 ** 31, 2 ** 53 + 1, 0.5, '5', null, {}, true];

/** Runs `fn` (sync, promise or async iterable) and returns what escaped that is not a UtcpError. */
async function escaped(fn: () => unknown): Promise<string | undefined> {
  try {
    const out = fn();
    if (out && typeof (out as Promise<unknown>).then === 'function') await out;
    else if (out && typeof (out as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function')
      for await (const _ of out as AsyncIterable<unknown>) {
        // drain
      }
    return undefined;
  } catch (error) {
    if (error instanceof UtcpError) return undefined;
    const e = error as Error;
    return `${e?.constructor?.name ?? typeof error}: ${String(e?.message ?? error).slice(0, 200)}`;
  }
}

class Findings {
  readonly list: string[] = [];
  async check(what: string, fn: () => unknown): Promise<void> {
    const raw = await escaped(fn);
    if (raw) this.list.push(`${what} → ${raw}`);
  }
}

const show = (v: unknown): string => {
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'symbol' || typeof v === 'function')
    return String(v);
  try {
    return String(JSON.stringify(v));
  } catch {
    return Object.prototype.toString.call(v);
  }
};

function manual(
  tools: unknown[],
  protocols = ['http', 'tcp', 'udp', 'websocket', 'sse', 'streamable_http', 'graphql', 'grpc', 'cli', 'mcp'],
) {
  return {
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ utcp_version: '1.0.0', manual_version: '1.0.0', tools }),
    allowed_communication_protocols: protocols,
  };
}

const tool = (name: string, template: Record<string, unknown>, inputs: unknown = { type: 'object' }) => ({
  name,
  inputs,
  tool_call_template: template,
});

describe('only typed errors leave the public API', () => {
  it('client options and limits', async () => {
    const f = new Findings();
    for (const v of HOSTILE_NUMBERS) {
      await f.check(`create({ timeoutMs: ${show(v)} })`, async () =>
        (await UtcpClient.create({}, { timeoutMs: v as number })).close(),
      );
      for (const limit of [
        'max_response_bytes',
        'max_redirects',
        'max_connections_per_origin',
        'stream_idle_timeout_ms',
        'max_document_bytes',
      ])
        await f.check(`create({ limits.${limit}: ${show(v)} })`, async () =>
          (await UtcpClient.create({ limits: { [limit]: v } } as never)).close(),
        );
    }
    for (const options of [null, 'x', 42])
      await f.check(`create({}, ${show(options)})`, async () =>
        (await UtcpClient.create({}, options as never)).close(),
      );
    for (const rootDir of ['\0', 42, 'x'.repeat(5000)])
      await f.check(`create({ rootDir: ${show(rootDir).slice(0, 20)} })`, async () =>
        (await UtcpClient.create({}, { rootDir: rootDir as string })).close(),
      );
    for (const config of [null, 42, 'x', [], { variables: 42 }, { variables: { A: 1 } }, { limits: 'x' }])
      await f.check(`create(${show(config)})`, async () => (await UtcpClient.create(config as never)).close());
    expect(f.list).toEqual([]);
  });

  it('per-call deadlines, names and arguments', async () => {
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());
    const r = await client.registerManual(
      manual([
        tool('get', { call_template_type: 'http', url: 'http://127.0.0.1:1/{id}', http_method: 'GET' }),
        tool(
          'typed',
          { call_template_type: 'http', url: 'http://127.0.0.1:1/x', http_method: 'POST' },
          { type: 'object', properties: { n: { type: 'integer', maximum: 10 } } },
        ),
      ]),
    );
    expect(r.errors).toEqual([]);
    const f = new Findings();
    for (const v of HOSTILE_NUMBERS) {
      await f.check(`callTool timeoutMs ${show(v)}`, () =>
        client.callTool('m.get', { id: 1 }, { timeoutMs: v as number }),
      );
      await f.check(`callToolStreaming timeoutMs ${show(v)}`, () =>
        client.callToolStreaming('m.get', { id: 1 }, { timeoutMs: v as number }),
      );
      await f.check(`searchTools limit ${show(v)}`, () => client.searchTools('get', v as number));
      await f.check(`searchTools {limit: ${show(v)}}`, () => client.searchTools('get', { limit: v as number }));
    }
    for (const signal of ['x', {}, 42])
      await f.check(`callTool signal ${show(signal)}`, () =>
        client.callTool('m.get', { id: 1 }, { signal: signal as never }),
      );
    for (const options of [null, 'x', 42, { onProgress: 42 }])
      await f.check(`callTool options ${show(options)}`, () => client.callTool('m.get', { id: 1 }, options as never));
    for (const name of [undefined, null, 42, '', '.', 'm.', '.get', 'm.get.x', '\0', 'x'.repeat(100_000)])
      await f.check(`callTool name ${show(name)?.slice(0, 20)}`, () => client.callTool(name as string, {}));
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    let deep: unknown = 1;
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const args: unknown[] = [
      null,
      'text',
      42,
      [],
      circular,
      { id: deep },
      { id: 1e308 },
      { id: -0 },
      { id: 10n },
      { id: Symbol('s') },
      { id: () => 1 },
      { id: 'x'.repeat(1_000_000) },
      { id: '\ud800' },
      { n: Number.MAX_VALUE * 10 },
      { n: NaN },
      { n: Infinity },
      { n: 'abc' },
    ];
    for (const a of args) {
      await f.check(`callTool m.get args ${String(show(a)).slice(0, 30)}`, () =>
        client.callTool('m.get', a as never, { timeoutMs: 5000 }),
      );
      await f.check(`callTool m.typed args ${String(show(a)).slice(0, 30)}`, () =>
        client.callTool('m.typed', a as never, { timeoutMs: 5000 }),
      );
    }
    for (const q of [undefined, null, 42, {}, '\0', '('.repeat(1000), 'x'.repeat(1_000_000)])
      await f.check(`searchTools query ${String(show(q)).slice(0, 20)}`, () => client.searchTools(q as string));
    for (const n of [undefined, null, 42, {}, '\0']) {
      await f.check(`deregisterManual ${show(n)}`, () => client.deregisterManual(n as string));
      await f.check(`refreshManual ${show(n)}`, () => client.refreshManual(n as string));
      await f.check(`getTool ${show(n)}`, () => client.getTool(n as string));
      await f.check(`getManual ${show(n)}`, () => client.getManual(n as string));
      await f.check(`getRequiredVariablesForRegisteredTool ${show(n)}`, () =>
        client.getRequiredVariablesForRegisteredTool(n as string),
      );
      await f.check(`getRequiredVariablesForManualAndTools ${show(n)}`, () =>
        client.getRequiredVariablesForManualAndTools(n as never),
      );
      await f.check(`registerFunctions ${show(n)}`, () => client.registerFunctions(n as string, n as never));
      await f.check(`registerFunctions m2 ${show(n)}`, () => client.registerFunctions('m2', [n] as never));
      await f.check(`registerCallable ${show(n)}`, () => client.registerCallable(n as string, n as never));
      await f.check(`registerManuals ${show(n)}`, () => client.registerManuals(n as never));
      await f.check(`onCatalogChange ${show(n)}`, () => client.onCatalogChange(n as never));
      await f.check(`onClose ${show(n)}`, () => client.onClose(n as never));
    }
    expect(f.list).toEqual([]);
  });

  it('manuals with hostile templates, schemas and numbers', { timeout: 120_000 }, async () => {
    const f = new Findings();
    const templates: Array<[string, Record<string, unknown>]> = [];
    for (const url of [
      'not a url',
      'http://[::1',
      'http://127.0.0.1:99999/x',
      'http://127.0.0.1:1/%zz',
      'http://exa mple/',
      'ftp://127.0.0.1/',
      'http://127.0.0.1:1/{a}{b}',
      '',
    ])
      templates.push([`http url ${url}`, { call_template_type: 'http', url, http_method: 'GET' }]);
    for (const method of ['G E T', '', 'CONNECT', 'get\r\n', 42])
      templates.push([
        `http method ${show(method)}`,
        { call_template_type: 'http', url: 'http://127.0.0.1:1/', http_method: method },
      ]);
    for (const headers of [{ 'bad header': 'v' }, { X: 'a\r\nb' }, { X: 'é\u0100' }, { X: 42 }, { '': 'v' }, 'x'])
      templates.push([
        `http headers ${show(headers)}`,
        { call_template_type: 'http', url: 'http://127.0.0.1:1/', headers },
      ]);
    for (const v of HOSTILE_NUMBERS) {
      templates.push([
        `http timeout ${show(v)}`,
        { call_template_type: 'http', url: 'http://127.0.0.1:1/', timeout: v },
      ]);
      templates.push([`tcp port ${show(v)}`, { call_template_type: 'tcp', host: '127.0.0.1', port: v, timeout: 1000 }]);
      templates.push([`tcp timeout ${show(v)}`, { call_template_type: 'tcp', host: '127.0.0.1', port: 1, timeout: v }]);
      templates.push([
        `tcp fixed_message_length ${show(v)}`,
        {
          call_template_type: 'tcp',
          host: '127.0.0.1',
          port: 1,
          framing_strategy: 'fixed_length',
          fixed_message_length: v,
          timeout: 1000,
        },
      ]);
      templates.push([
        `tcp length_prefix_bytes ${show(v)}`,
        {
          call_template_type: 'tcp',
          host: '127.0.0.1',
          port: 1,
          framing_strategy: 'length_prefix',
          length_prefix_bytes: v,
          timeout: 1000,
        },
      ]);
      templates.push([`udp port ${show(v)}`, { call_template_type: 'udp', host: '127.0.0.1', port: v, timeout: 1000 }]);
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0)
        templates.push([
          `udp number_of_response_datagrams ${show(v)}`,
          { call_template_type: 'udp', host: '127.0.0.1', port: 1, number_of_response_datagrams: v, timeout: 1000 },
        ]);
      templates.push([`sse timeout ${show(v)}`, { call_template_type: 'sse', url: 'http://127.0.0.1:1/', timeout: v }]);
      templates.push([
        `websocket timeout ${show(v)}`,
        { call_template_type: 'websocket', url: 'ws://127.0.0.1:1/', timeout: v },
      ]);
      templates.push([
        `graphql timeout ${show(v)}`,
        {
          call_template_type: 'graphql',
          url: 'http://127.0.0.1:1/',
          timeout: v,
          operation_type: 'query',
          query: '{ a }',
        },
      ]);
    }
    templates.push(['websocket url', { call_template_type: 'websocket', url: 'ws://[::1' }]);
    for (const v of HOSTILE_NUMBERS) {
      templates.push([
        `grpc port ${show(v)}`,
        { call_template_type: 'grpc', host: '127.0.0.1', port: v, timeout: 1000 },
      ]);
      templates.push([
        `grpc timeout ${show(v)}`,
        { call_template_type: 'grpc', host: '127.0.0.1', port: 1, timeout: v },
      ]);
      templates.push([
        `cli timeout ${show(v)}`,
        { call_template_type: 'cli', commands: [{ command: 'echo UTCP_ARG_a_UTCP_END' }], timeout: v },
      ]);
      templates.push([`mcp config ${show(v)}`, { call_template_type: 'mcp', config: v }]);
      templates.push([`mcp server ${show(v)}`, { call_template_type: 'mcp', config: { mcpServers: { s: v } } }]);
      templates.push([
        `mcp server timeout ${show(v)}`,
        { call_template_type: 'mcp', config: { mcpServers: { s: { url: 'http://127.0.0.1:1/mcp', timeout: v } } } },
      ]);
    }
    for (const commands of [42, 'x', [42], [{ command: 42 }], [{}], []])
      templates.push([`cli commands ${show(commands)}`, { call_template_type: 'cli', commands }]);
    for (const command of ['', '\0', 42, ['x']])
      templates.push([
        `mcp stdio command ${show(command)}`,
        { call_template_type: 'mcp', config: { mcpServers: { s: { command, args: 42 } } } },
      ]);
    templates.push(['tcp host', { call_template_type: 'tcp', host: '\0', port: 1, timeout: 1000 }]);
    templates.push(['udp host', { call_template_type: 'udp', host: 'a'.repeat(300), port: 1, timeout: 1000 }]);
    const schemas: unknown[] = [
      { type: 'object', properties: { a: { type: 'string', pattern: '(' } } },
      { type: 'object', properties: { a: { $ref: '#/nope' } } },
      { type: 'object', properties: { a: { type: 'bogus' } } },
      { type: 'object', properties: { a: { type: 'string', format: 'bogus' } } },
      { type: 'object', properties: { a: { type: 'integer', multipleOf: 1e-320 } } },
      { type: 'object', properties: { a: { type: 'integer', maximum: 1e308 } } },
      { $schema: 'http://127.0.0.1:1/schema', type: 'object' },
      { type: 'object', required: 'a' },
      { type: 'object', properties: 42 },
      'not a schema',
      42,
    ];
    const client = await UtcpClient.create();
    onTestFinished(() => client.close());
    let i = 0;
    for (const [label, template] of templates) {
      const name = `t${i++}`;
      await f.check(`register ${label}`, async () => {
        const r = await client.registerManual({ ...manual([tool('x', template)]), name });
        if (r.success) {
          await f.check(`call ${label}`, () => client.callTool(`${name}.x`, { a: 1, b: 2 }, { timeoutMs: 5000 }));
          await f.check(`stream ${label}`, () => client.callToolStreaming(`${name}.x`, { a: 1 }, { timeoutMs: 5000 }));
        }
      });
    }
    for (const schema of schemas) {
      const name = `s${i++}`;
      const label = `inputs ${JSON.stringify(schema).slice(0, 60)}`;
      await f.check(`register ${label}`, async () => {
        const r = await client.registerManual({
          ...manual([
            tool('x', { call_template_type: 'http', url: 'http://127.0.0.1:1/x', http_method: 'POST' }, schema),
          ]),
          name,
        });
        if (r.success)
          await f.check(`call ${label}`, () => client.callTool(`${name}.x`, { a: 'v' }, { timeoutMs: 5000 }));
      });
    }
    for (const content of [
      '{',
      '[]',
      'null',
      '1e999999',
      '{"tools": 42}',
      '{"tools": [null]}',
      `{"tools": [${'['.repeat(50_000)}`,
      '\uFEFF{}',
    ])
      await f.check(`text manual ${content.slice(0, 20)}`, () =>
        client.registerManual({ name: `c${i++}`, call_template_type: 'text', content }),
      );
    for (const template of [
      null,
      42,
      'x',
      {},
      { name: 'n' },
      { name: 'n', call_template_type: 'nope' },
      { name: '\0', call_template_type: 'text', content: '{}' },
      { name: 'n', call_template_type: 'file', file_path: '\0' },
      { name: 'n', call_template_type: 'file', file_path: 42 },
    ])
      await f.check(`registerManual ${show(template)}`, () => client.registerManual(template as never));
    expect(f.list).toEqual([]);
  });
});
