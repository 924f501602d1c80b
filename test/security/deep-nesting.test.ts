/**
 * Threat model (docs/design/threat-model.md#edges-and-nesting): data a server or a manual controls may nest
 * arbitrarily deep (JSON.parse accepts 100,000 levels), and no walk over it may end in a raw
 * `RangeError: Maximum call stack size exceeded`. Results: the post-processors walk without recursion and fail
 * with `UtcpLimitError` past their bound. Manuals: a tool (or a manual's call template) nested deeper than the
 * registration bound is refused with a validation issue naming its field, before any later walk (variable
 * substitution, message templates, Ajv, schema conversions) sees it; `inputs.required` must be a list of names.
 * Every server is a real one on 127.0.0.1; the host stays alive and answers the next call.
 */
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient, UtcpError } from './packed.js';

/** `{"a":{"a":...leaf...}}` nested `depth` levels, as text (building it as an object would need the recursion we test). */
const nestedText = (depth: number, leaf: string) => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);

let server: Server;
let base: string;
/** Requests the server received (a refused call must not add any). */
let requests = 0;
/** What the server answers at `/<depth>`: a JSON body nested that deep around a long string. */
beforeAll(async () => {
  server = createServer((req, res) => {
    requests += 1;
    const depth = Number(req.url?.slice(1));
    const body = nestedText(depth, '{"keep":"abcdefghij","drop":1}');
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

async function clientWith(postProcessing: unknown[]): Promise<UtcpClient> {
  const client = await UtcpClient.create({ post_processing: postProcessing } as never);
  onTestFinished(() => client.close());
  const tools = [100_000, 5_000].map((depth) => ({
    name: `d${depth}`,
    inputs: { type: 'object' },
    tool_call_template: { call_template_type: 'http', url: `${base}/${depth}`, http_method: 'GET' },
  }));
  const r = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: ['http'],
  });
  expect(r.errors).toEqual([]);
  return client;
}

/** The innermost object of a result nested `depth` levels under `a`, read without recursion. */
function innermost(value: unknown, depth: number): unknown {
  let v = value;
  for (let i = 0; i < depth; i++) v = (v as { a: unknown }).a;
  return v;
}

describe('post-processors over a result nested 100,000 deep', () => {
  const processors = [
    { tool_post_processor_type: 'limit_strings', limit: 3 },
    { tool_post_processor_type: 'filter_dict', exclude_keys: ['drop'] },
    { tool_post_processor_type: 'filter_dict', only_include_keys: ['keep'] },
  ];

  for (const processor of processors) {
    const label = JSON.stringify(processor).slice(0, 70);
    it(`${label}: callTool and callToolStreaming fail with UtcpLimitError, and the client still works`, async () => {
      const client = await clientWith([processor]);
      const error = await client.callTool('m.d100000', {}).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UtcpError);
      expect(error).toMatchObject({ name: 'UtcpLimitError', code: 'LIMIT_EXCEEDED', limit: 'max_nesting_depth' });
      expect((error as Error).message).toContain('m.d100000');
      const streamed = await (async () => {
        for await (const _ of client.callToolStreaming('m.d100000', {})) {
          // nothing is yielded
        }
      })().catch((e: unknown) => e);
      expect(streamed).toMatchObject({ code: 'LIMIT_EXCEEDED' });
      // The host is alive and the same client answers a shallower result, processed all the way down.
      const result = await client.callTool('m.d5000', {});
      const inner = innermost(result, 5000);
      if (processor.tool_post_processor_type === 'limit_strings') expect(inner).toEqual({ keep: 'abc', drop: 1 });
      else expect(inner).toEqual({ keep: 'abcdefghij' });
    });
  }
});

describe('a manual nested too deep is refused with a typed error before anything is sent', () => {
  /** Registers one tool (written as text); the server above counts what reaches it. */
  async function register(toolText: string) {
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    const r = await client.registerManual({
      name: 'm',
      call_template_type: 'text',
      content: `{"tools":[${toolText}]}`,
      allowed_communication_protocols: ['http', 'websocket'],
    });
    return { r, client };
  }

  const template = (extra: string) => `{"call_template_type":"http","url":"${base}/1","http_method":"POST"${extra}}`;

  it('inputs.required holding a deeply nested object: the tool is dropped with an issue; calling it is TOOL_NOT_FOUND', async () => {
    const { r, client } = await register(
      `{"name":"t","inputs":{"type":"object","required":[${nestedText(100_000, '{}')}]},"tool_call_template":${template('')}}`,
    );
    expect(r.errors).toEqual([]);
    expect(r.manual.tools).toEqual([]);
    expect(r.warnings.join('\n')).toContain('tools[0].inputs.required: expected an array of property names');
    await expect(client.callTool('m.t', {})).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
  });

  it('inputs.required that is not a list of names (a string) is an issue too', async () => {
    const { r } = await register(
      `{"name":"t","inputs":{"type":"object","required":"a"},"tool_call_template":${template('')}}`,
    );
    expect(r.manual.tools).toEqual([]);
    expect(r.warnings.join('\n')).toContain('tools[0].inputs.required');
  });

  const cases: Array<[string, () => string, RegExp]> = [
    [
      'an inputs schema nested 100,000 deep',
      () =>
        `{"name":"t","inputs":{"type":"object","properties":{"p":${nestedText(100_000, '{}')}}},"tool_call_template":${template('')}}`,
      /inputs schema of m\.t/,
    ],
    [
      'an http body template nested 100,000 deep',
      () => `{"name":"t","tool_call_template":${template(`,"body":${nestedText(100_000, '1')}`)}}`,
      /call template: body\.a/,
    ],
    [
      'an unknown template field nested 100,000 deep',
      () => `{"name":"t","tool_call_template":${template(`,"x":${nestedText(100_000, '1')}`)}}`,
      /call template: x\.a/,
    ],
    [
      'a websocket message nested 100,000 deep',
      () =>
        `{"name":"t","tool_call_template":{"call_template_type":"websocket","url":"ws://127.0.0.1:${new URL(base).port}/x","message":${nestedText(100_000, '1')}}}`,
      /call template: message\.a/,
    ],
  ];

  for (const [label, text, where] of cases) {
    it(`${label}: the call fails with UtcpValidationError (INVALID_MANUAL) and nothing is sent`, async () => {
      const before = requests;
      const { r, client } = await register(text());
      expect(r.errors).toEqual([]);
      const error = await client.callTool('m.t', {}).catch((e: unknown) => e);
      expect(error).toMatchObject({ name: 'UtcpValidationError', code: 'INVALID_MANUAL' });
      expect((error as Error).message).toMatch(where);
      expect((error as Error).message).toContain('nested deeper than 256 levels');
      const streamed = await (async () => {
        for await (const _ of client.callToolStreaming('m.t', {})) {
          // nothing is yielded
        }
      })().catch((e: unknown) => e);
      expect(streamed).toMatchObject({ code: 'INVALID_MANUAL' });
      expect(requests).toBe(before);
    });
  }

  it('a template nested 240 levels deep (within the bound) is substituted and sent', async () => {
    const before = requests;
    const { r, client } = await register(
      `{"name":"t","tool_call_template":${template(`,"body":${nestedText(240, '"${x}"')}`)}}`,
    );
    expect(r.manual.tools.map((t) => t.name)).toEqual(['m.t']);
    const error = await client.callTool('m.t', {}).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'MISSING_VARIABLE' }); // the walk reached the leaf 240 levels down
    expect(requests).toBe(before);
  });

  it("a manual's own call template nested 100,000 deep is refused with a typed error", async () => {
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    const manualTemplate = JSON.parse(
      `{"name":"m","call_template_type":"http","url":"${base}/manual","x":${nestedText(100_000, '1')}}`,
    );
    const before = requests;
    const outcome = await client.registerManual(manualTemplate).then(
      (r) => r.errors.join('\n'),
      (e: unknown) => `${(e as Error).name} ${(e as { code?: string }).code}: ${(e as Error).message}`,
    );
    expect(outcome).not.toContain('RangeError');
    expect(outcome).toMatch(/nested deeper than 256 levels/);
    expect(requests).toBe(before);
  });
});
