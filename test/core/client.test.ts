import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient, type Tool, type UtcpClientOptions } from '../../src/index.js';
import { recordingTransport } from '../helpers/recording-transport.js';

const SECRET = 'sk-live-very-secret-123';

function textManual(name: string, tools: unknown[], extra: Record<string, unknown> = {}) {
  return { name, call_template_type: 'text', content: JSON.stringify({ tools }), ...extra };
}

function echoTool(name: string, extra: Record<string, unknown> = {}) {
  return {
    name,
    description: `The ${name} tool`,
    inputs: { type: 'object', properties: { x: { type: 'number' } } },
    tool_call_template: { call_template_type: 'echo', url: 'https://api.example.com/${TOKEN}' },
    ...extra,
  };
}

async function clientWith(options: UtcpClientOptions = {}, config: Record<string, unknown> = {}) {
  const { factory, rec } = recordingTransport('echo', () => ({ manual: { tools: [] } }));
  const client = await UtcpClient.create(config, { transports: { echo: factory }, ...options });
  onTestFinished(() => client.close());
  return { client, rec };
}

describe('registration', () => {
  it('registers the manuals of the config and reports each result', async () => {
    const { client } = await clientWith(
      {},
      {
        manual_call_templates: [
          textManual('a', [echoTool('one')], { allowed_communication_protocols: ['echo'] }),
          { name: 'broken', call_template_type: 'http' },
        ],
      },
    );
    expect(client.initialRegistrations.map((r) => r.success)).toEqual([true, false]);
    expect(client.initialRegistrations[1].errors[0]).toBe('Invalid manual call template: url: required');
    expect((await client.getTools()).map((t) => t.name)).toEqual(['a.one']);
  });

  it('skips a tool with an unknown call template type and registers the rest', async () => {
    const { client } = await clientWith();
    const r = await client.registerManual(
      textManual(
        'm',
        [echoTool('good'), { name: 'odd', tool_call_template: { call_template_type: 'carrier_pigeon' } }],
        { allowed_communication_protocols: ['echo', 'carrier_pigeon'] },
      ),
    );
    expect(r.success).toBe(true);
    expect(r.manual.tools.map((t) => t.name)).toEqual(['m.good']);
    expect(r.warnings.join('\n')).toContain(
      'tools[1].tool_call_template.call_template_type: unknown call_template_type "carrier_pigeon"',
    );
  });

  it('sanitises the manual name without mutating the caller object', async () => {
    const { client } = await clientWith();
    const template = textManual('test-manual.with/special@chars', []);
    const copy = structuredClone(template);
    const r = await client.registerManual(template);
    expect(r.manualCallTemplate.name).toBe('test_manual_with_special_chars');
    expect(template).toEqual(copy);
  });

  it('rejects a taken name, also when two registrations race', async () => {
    const { client } = await clientWith();
    const [a, b] = await client.registerManuals([textManual('dup', []), textManual('dup', [])]);
    expect([a.success, b.success].sort()).toEqual([false, true]);
    const again = await client.registerManual(textManual('dup', []));
    expect(again.success).toBe(false);
    expect(again.errors[0]).toMatch(/Manual dup already registered/);
  });

  it('leaves nothing behind when discovery fails', async () => {
    const { factory } = recordingTransport('flaky', () => {
      throw new Error('server exploded');
    });
    const client = await UtcpClient.create({}, { transports: { flaky: factory } });
    onTestFinished(() => client.close());
    const r = await client.registerManual({ name: 'f', call_template_type: 'flaky' });
    expect(r).toMatchObject({ success: false, errors: ['server exploded'], manual: { tools: [] } });
    expect(await client.getManualNames()).toEqual([]);
    expect((await client.registerManual(textManual('f', []))).success).toBe(true);
  });

  it('fails the manual when the discovered document has no tools array', async () => {
    const { client } = await clientWith();
    const r = await client.registerManual({ name: 'x', call_template_type: 'text', content: '{"hello": 1}' });
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatch(/neither a UTCP manual/);
  });

  it('drops tools whose protocol the manual does not allow, and rejects calls to them', async () => {
    const { client } = await clientWith();
    const r = await client.registerManual(textManual('m', [echoTool('e')]));
    expect(r.manual.tools).toEqual([]);
    expect(r.warnings[0]).toMatch(/Dropped tool e: protocol "echo" is not in allowed_communication_protocols \[text\]/);
    const ok = await client.registerManual(
      textManual('m2', [echoTool('e')], { allowed_communication_protocols: ['text', 'echo'] }),
    );
    expect(ok.manual.tools.map((t) => t.name)).toEqual(['m2.e']);
  });

  it('returns and stores raw templates: secrets never appear in results, tools, search, errors or logs', async () => {
    const logs: string[] = [];
    const { client, rec } = await clientWith(
      {
        logger: {
          debug: (...a: unknown[]) => logs.push(JSON.stringify(a)),
          info: (...a: unknown[]) => logs.push(JSON.stringify(a)),
          warn: (...a: unknown[]) => logs.push(JSON.stringify(a)),
        },
      },
      { variables: { m_TOKEN: SECRET } },
    );
    const r = await client.registerManual(
      textManual('m', [echoTool('echo')], { allowed_communication_protocols: ['echo'] }),
    );
    expect(JSON.stringify(r)).not.toContain(SECRET);
    expect(JSON.stringify(await client.getTool('m.echo'))).not.toContain(SECRET);
    expect(JSON.stringify(await client.searchTools('echo'))).not.toContain(SECRET);
    await client.callTool('m.echo', { x: 1 });
    expect(rec.calls[0].template.url).toBe(`https://api.example.com/${SECRET}`);
    expect((await client.getTool('m.echo'))!.tool_call_template).toMatchObject({
      url: 'https://api.example.com/${TOKEN}',
    });
    expect(logs.join('\n')).not.toContain(SECRET);
  });

  it('names the exact key to set when a variable is missing', async () => {
    const { client } = await clientWith();
    await client.registerManual(
      textManual('my_api', [echoTool('echo')], { allowed_communication_protocols: ['echo'] }),
    );
    await expect(client.callTool('my_api.echo', {})).rejects.toMatchObject({
      code: 'MISSING_VARIABLE',
      variableName: 'my__api_TOKEN',
    });
  });

  it('lists the variables a manual needs, discovering tools when the template has none', async () => {
    const { client } = await clientWith();
    const keys = await client.getRequiredVariablesForManualAndTools(
      textManual(
        'svc',
        [echoTool('a'), echoTool('b', { tool_call_template: { call_template_type: 'echo', url: '${HOST}/$TOKEN' } })],
        { allowed_communication_protocols: ['echo'] },
      ),
    );
    expect(keys).toEqual(['svc_TOKEN', 'svc_HOST']);
    expect(await client.getManualNames()).toEqual([]);
  });

  it('deregisters a manual and its tools', async () => {
    const { client } = await clientWith();
    await client.registerManual(textManual('m', [echoTool('e')], { allowed_communication_protocols: ['echo'] }));
    expect(await client.deregisterManual('m')).toBe(true);
    expect(await client.getTool('m.e')).toBeUndefined();
    expect(await client.deregisterManual('m')).toBe(false);
  });
});

describe('calls', () => {
  it('throws ToolNotFoundError for an unknown tool', async () => {
    const { client } = await clientWith();
    await expect(client.callTool('nope.x', {})).rejects.toMatchObject({
      name: 'ToolNotFoundError',
      code: 'TOOL_NOT_FOUND',
    });
  });

  it('validates arguments before the transport runs, listing each bad field', async () => {
    const { client, rec } = await clientWith({}, { variables: { m_TOKEN: 't' } });
    await client.registerManual(
      textManual(
        'm',
        [
          echoTool('e', {
            inputs: {
              type: 'object',
              properties: { city: { type: 'string' }, n: { type: 'integer', nullable: true } },
              required: ['city'],
            },
          }),
        ],
        { allowed_communication_protocols: ['echo'] },
      ),
    );
    const err: any = await client.callTool('m.e', { n: 'x' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(err.issues).toEqual(
      expect.arrayContaining([
        { path: 'city', message: 'required' },
        { path: 'n', message: expect.stringContaining('must be') },
      ]),
    );
    expect(rec.calls).toHaveLength(0);
    await expect(client.callTool('m.e', { city: 'Paris', n: null })).resolves.toEqual({
      echo: { city: 'Paris', n: null },
    });
  });

  it('checks `format` (uuid, date-time, email, uri) before sending, naming the field (docs/design/manual-format.md#argument-formats)', async () => {
    const { client, rec } = await clientWith({}, { variables: { m_TOKEN: 't' } });
    const inputs = {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        at: { type: 'string', format: 'date-time' },
        mail: { type: 'string', format: 'email' },
        home: { type: 'string', format: 'uri' },
        size: { type: 'integer', format: 'int32' },
        odd: { type: 'string', format: 'x-vendor-format' },
      },
    };
    await client.registerManual(
      textManual('m', [echoTool('e', { inputs })], { allowed_communication_protocols: ['echo'] }),
    );
    const err: any = await client
      .callTool('m.e', { id: 'not-a-uuid', at: '2026-13-40', mail: 'nobody', home: 'no scheme', size: 2 ** 40 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(err.issues).toEqual([
      { path: 'id', message: 'must match format "uuid"' },
      { path: 'at', message: 'must match format "date-time"' },
      { path: 'mail', message: 'must match format "email"' },
      { path: 'home', message: 'must match format "uri"' },
      { path: 'size', message: 'must match format "int32"' },
    ]);
    expect(err.message).toContain('id');
    expect(rec.calls).toHaveLength(0);
    const good = {
      id: '3f2504e0-4f89-11d3-9a0c-0305e82c3301',
      at: '2026-11-24T14:00:00Z',
      mail: 'a@example.com',
      home: 'https://example.com/x',
      size: 7,
      odd: 'anything',
    };
    await expect(client.callTool('m.e', good)).resolves.toEqual({ echo: good });
  });

  it('skips argument validation when switched off', async () => {
    const { client } = await clientWith({ validateArguments: false }, { variables: { m_TOKEN: 't' } });
    await client.registerManual(
      textManual('m', [echoTool('e', { inputs: { type: 'object', required: ['city'] } })], {
        allowed_communication_protocols: ['echo'],
      }),
    );
    await expect(client.callTool('m.e', {})).resolves.toEqual({ echo: {} });
  });

  it('applies the config post-processors to results', async () => {
    const { client } = await clientWith(
      {},
      {
        variables: { m_TOKEN: 't' },
        post_processing: [
          { tool_post_processor_type: 'filter_dict', exclude_keys: ['x'] },
          { tool_post_processor_type: 'limit_strings', limit: 2, only_include_manuals: ['m'] },
        ],
      },
    );
    await client.registerManual(
      textManual('m', [echoTool('e', { inputs: {} })], { allowed_communication_protocols: ['echo'] }),
    );
    expect(await client.callTool('m.e', { x: 1, y: 'long' })).toEqual({ echo: { y: 'lo' } });
  });

  it('aborts a running call with UtcpAbortError and the tool sees its signal fire', async () => {
    const { client } = await clientWith();
    let toolSignal: AbortSignal | undefined;
    await client.registerFunctions('local', [
      {
        name: 'wait',
        handler: (_a, { signal }) =>
          new Promise((_, reject) => {
            toolSignal = signal;
            signal.addEventListener('abort', () => reject(signal.reason));
          }),
      },
    ]);
    const controller = new AbortController();
    const p = client.callTool('local.wait', {}, { signal: controller.signal });
    await expect.poll(() => toolSignal).toBeDefined();
    controller.abort();
    await expect(p).rejects.toMatchObject({ name: 'UtcpAbortError', code: 'ABORTED' });
    expect(toolSignal!.aborted).toBe(true);
  });

  it('rejects with TIMEOUT when a tool never answers within timeoutMs', async () => {
    const { client } = await clientWith();
    await client.registerFunctions('local', [{ name: 'never', handler: () => new Promise(() => {}) }]);
    await expect(client.callTool('local.never', {}, { timeoutMs: 30 })).rejects.toMatchObject({
      code: 'TIMEOUT',
      message: 'Tool local.never timed out after 30 ms',
    });
  });

  it('wraps a thrown function error with its cause', async () => {
    const { client } = await clientWith();
    const boom = new Error('boom');
    await client.registerFunctions('local', [
      {
        name: 'fail',
        handler: () => {
          throw boom;
        },
      },
    ]);
    await expect(client.callTool('local.fail', {})).rejects.toMatchObject({
      code: 'TOOL_ERROR',
      message: 'Tool local.fail failed: boom',
      cause: boom,
    });
  });

  it('streams one item for one-shot transports and stops a stream when the consumer breaks', async () => {
    let cleanedUp = false;
    const client = await UtcpClient.create(
      {},
      {
        transports: {
          ticker: () => ({
            type: 'ticker',
            registerManual: async () => ({
              manual: { tools: [{ name: 'tick', tool_call_template: { call_template_type: 'ticker' } }] },
            }),
            callTool: async () => 'single',
            async *callToolStream(_t, _a, _tpl, options) {
              try {
                for (let i = 0; ; i++) {
                  if (options.signal.aborted) return;
                  yield i;
                }
              } finally {
                cleanedUp = true;
              }
            },
            close: async () => {},
          }),
        },
      },
    );
    onTestFinished(() => client.close());
    await client.registerManual({ name: 't', call_template_type: 'ticker' });
    const seen: unknown[] = [];
    for await (const item of client.callToolStreaming('t.tick', {})) {
      seen.push(item);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual([0, 1, 2]);
    expect(cleanedUp).toBe(true);
    await client.registerFunctions('local', [{ name: 'one', handler: () => 42 }]);
    const items: unknown[] = [];
    for await (const item of client.callToolStreaming('local.one', {})) items.push(item);
    expect(items).toEqual([42]);
  });
});

describe('isolation and shutdown', () => {
  it('gives each client its own transport instances; closing one leaves the other working', async () => {
    const { factory, rec } = recordingTransport('echo', () => ({
      manual: { tools: [{ name: 'e', tool_call_template: { call_template_type: 'echo' } }] },
    }));
    const a = await UtcpClient.create({}, { transports: { echo: factory } });
    const b = await UtcpClient.create({}, { transports: { echo: factory } });
    onTestFinished(() => b.close());
    await a.registerManual({ name: 'm', call_template_type: 'echo' });
    await b.registerManual({ name: 'm', call_template_type: 'echo' });
    expect(rec.instances).toBe(2);
    await a.close();
    expect(rec.closed).toBe(1);
    await expect(b.callTool('m.e', { v: 1 })).resolves.toEqual({ echo: { v: 1 } });
    await expect(a.callTool('m.e', {})).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
    await a.close();
    expect(rec.closed).toBe(1);
  });

  it('does not share callables or variables between clients', async () => {
    const a = await UtcpClient.create({ variables: { m_TOKEN: 'a' } });
    const b = await UtcpClient.create({});
    onTestFinished(async () => {
      await a.close();
      await b.close();
    });
    await a.registerFunctions('fn', [{ name: 'hello', handler: () => 'from a' }]);
    expect(await b.getTool('fn.hello')).toBeUndefined();
    expect((await b.registerManual({ name: 'fn', call_template_type: 'direct' })).manual.tools).toEqual([]);
  });

  it('close() aborts calls in flight', async () => {
    const client = await UtcpClient.create();
    await client.registerFunctions('local', [
      {
        name: 'wait',
        handler: (_a, { signal }) =>
          new Promise((_, rej) => signal.addEventListener('abort', () => rej(signal.reason))),
      },
    ]);
    const p = client.callTool('local.wait', {});
    await client.close();
    await expect(p).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });
});

describe('config files and file manuals', () => {
  function workspace() {
    const dir = mkdtempSync(join(tmpdir(), 'utcp-ws-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const manual = {
      tools: [
        {
          name: 'readme',
          description: 'Read me',
          tool_call_template: { call_template_type: 'file', file_path: 'notes.txt' },
        },
      ],
    };
    writeFileSync(join(dir, 'notes.txt'), 'hello notes');
    writeFileSync(
      join(dir, 'tools.yaml'),
      `tools:\n  - name: readme\n    description: Read me\n    tool_call_template:\n      call_template_type: file\n      file_path: notes.txt\n`,
    );
    writeFileSync(join(dir, 'tools.json'), JSON.stringify(manual));
    return dir;
  }

  it('loads a YAML config file whose file manual is resolved against the root dir', async () => {
    const dir = workspace();
    writeFileSync(
      join(dir, 'utcp.config.yaml'),
      'manual_call_templates:\n  - name: notes\n    call_template_type: file\n    file_path: tools.yaml\n',
    );
    const client = await UtcpClient.create('utcp.config.yaml', { rootDir: dir });
    onTestFinished(() => client.close());
    expect(client.initialRegistrations[0].success).toBe(true);
    expect(await client.callTool('notes.readme', {})).toBe('hello notes');
  });

  it('loads legacy providers_file_path configs', async () => {
    const dir = workspace();
    writeFileSync(
      join(dir, 'providers.json'),
      JSON.stringify([{ name: 'legacy', provider_type: 'text', file_path: 'tools.json' }]),
    );
    const client = await UtcpClient.fromConfigFile(join(dir, 'config.json'), {}).catch(() => undefined);
    expect(client).toBeUndefined(); // no such file: a clear error, tested below
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ providers_file_path: 'providers.json' }));
    const c = await UtcpClient.fromConfigFile(join(dir, 'config.json'));
    onTestFinished(() => c.close());
    expect(c.initialRegistrations[0]).toMatchObject({ success: true });
    expect((await c.getTools()).map((t: Tool) => t.name)).toEqual(['legacy.readme']);
  });

  it('reports a malformed config with every path', async () => {
    await expect(
      UtcpClient.create({ manual_call_templates: {} as never, variables: { a: {} as never } }),
    ).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('variables.a: expected a string; manual_call_templates: expected an array'),
    });
    await expect(UtcpClient.create('missing.json', { rootDir: '/nonexistent-dir' })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringContaining('Cannot read config file'),
    });
  });

  it.each(['../../etc/passwd', '/etc/passwd', 'escape-link'])('confines file_path %s to the root dir', async (path) => {
    const dir = workspace();
    const outside = mkdtempSync(join(tmpdir(), 'utcp-outside-'));
    onTestFinished(() => rmSync(outside, { recursive: true, force: true }));
    writeFileSync(join(outside, 'secret.json'), JSON.stringify({ tools: [] }));
    symlinkSync(join(outside, 'secret.json'), join(dir, 'escape-link'));
    const client = await UtcpClient.create({}, { rootDir: dir });
    onTestFinished(() => client.close());
    const r = await client.registerManual({ name: 'x', call_template_type: 'file', file_path: path });
    expect(r.success).toBe(false);
    expect(r.errors[0]).toMatch(/outside the client's root directory/);
  });

  it('rejects a directory as file_path', async () => {
    const dir = workspace();
    mkdirSync(join(dir, 'sub'));
    const client = await UtcpClient.create({}, { rootDir: dir });
    onTestFinished(() => client.close());
    expect(
      (await client.registerManual({ name: 'x', call_template_type: 'file', file_path: 'sub' })).errors[0],
    ).toMatch(/not a regular file/);
  });
});
