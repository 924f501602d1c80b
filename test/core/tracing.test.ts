/**
 * OpenTelemetry spans (docs/design/observability.md) against the real SDK: a BasicTracerProvider with an
 * InMemorySpanExporter registered as the global provider, over real HTTP tools on 127.0.0.1 and the agent loop
 * with a scripted model. Checks names, kinds, parentage (with and without a context manager), attributes, error
 * status, retry events, and that no argument value or secret reaches any span.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { channel } from 'node:diagnostics_channel';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  trace,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { runAgent, userMessage } from '../../src/agent/index.js';
import { UtcpClient, type TransportFactory } from '../../src/index.js';
import { ScriptedModel, textTurn, toolCallsTurn } from '../../src/testing/index.js';
import { json, startServer, type TestServer } from '../fixtures/http/server.js';

const SECRET = 'otel-secret-5d1c9e';
const ARG = 'argument-value-77b2';

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;

beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
});
afterEach(async () => {
  trace.disable();
  context.disable();
  await provider.shutdown();
});

/** A context manager on AsyncLocalStorage, as an application using the SDK's Node package would register. */
class StorageContextManager implements ContextManager {
  readonly #storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.#storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.#storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.#storage.disable();
    return this;
  }
}

function manualFor(base: string) {
  return {
    utcp_version: '1.0.1',
    manual_version: '1.0.0',
    tools: [
      {
        name: 'echo',
        description: 'Echoes its path',
        inputs: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        tool_call_template: {
          call_template_type: 'http',
          url: `${base}/items/{id}`,
          auth: { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-Api-Key' },
        },
      },
      {
        name: 'fail',
        description: 'Answers 500',
        inputs: { type: 'object', properties: { id: { type: 'string' } } },
        tool_call_template: {
          call_template_type: 'http',
          url: `${base}/fail/{id}`,
          auth: { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-Api-Key' },
        },
      },
    ],
  };
}

async function apiServer(): Promise<TestServer> {
  let base = '';
  const s = await startServer((req, res) => {
    if (req.url === '/utcp') return json(res, manualFor(base));
    if (req.url?.startsWith('/items/')) return json(res, { path: req.url, key: req.headers['x-api-key'] });
    if (req.url?.startsWith('/fail/')) return json(res, { error: `failed for ${req.url}` }, 500);
    json(res, {}, 404);
  });
  base = s.url;
  onTestFinished(() => s.close());
  return s;
}

async function client(transports?: Record<string, TransportFactory>) {
  const c = await UtcpClient.create({ variables: { demo_API_KEY: SECRET } }, transports ? { transports } : {});
  onTestFinished(() => c.close());
  return c;
}

async function registerDemo(c: UtcpClient, s: TestServer) {
  const result = await c.registerManual({
    name: 'demo',
    call_template_type: 'http',
    url: `${s.url}/utcp`,
    auth: { auth_type: 'api_key', api_key: '${API_KEY}', var_name: 'X-Api-Key' },
  });
  expect(result.success).toBe(true);
}

const spans = () => exporter.getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const parentId = (s: ReadableSpan) => s.parentSpanContext?.spanId;

/** Everything a span exports that could carry a value: name, attributes, events, status. */
function exported(list: readonly ReadableSpan[]): string {
  return JSON.stringify(
    list.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events, status: s.status, links: s.links })),
  );
}

describe('tool call spans', () => {
  it('one execute_tool span per call with the GenAI and utcp attributes, never an argument value or secret', async () => {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    await expect(c.callTool('demo.echo', { id: ARG })).resolves.toEqual({ path: `/items/${ARG}`, key: SECRET });

    const [span] = named('execute_tool demo.echo');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.attributes).toEqual({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'demo.echo',
      'utcp.manual.name': 'demo',
      'utcp.call_template_type': 'http',
      'utcp.outcome': 'ok',
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(parentId(span)).toBeUndefined();
    const all = exported(spans());
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(ARG);
  });

  it('a failed call has error.type (the HTTP status) and error status, and still no argument value', async () => {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    const error = await c.callTool('demo.fail', { id: ARG }).catch((e) => e);
    expect(error).toMatchObject({ code: 'HTTP_STATUS', status: 500 });

    const [span] = named('execute_tool demo.fail');
    expect(span.attributes).toMatchObject({ 'error.type': '500', 'utcp.outcome': 'error' });
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR });
    expect(span.events).toEqual([]);
    const all = exported(spans());
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(ARG);
  });

  it('an unknown tool is a failed span with the error code as error.type', async () => {
    const c = await client();
    await expect(c.callTool('nope.tool', {})).rejects.toMatchObject({ code: 'TOOL_NOT_FOUND' });
    const [span] = named('execute_tool nope.tool');
    expect(span.attributes).toMatchObject({ 'error.type': 'TOOL_NOT_FOUND', 'utcp.manual.name': 'nope' });
    expect(span.attributes['utcp.call_template_type']).toBeUndefined();
  });

  it('takes gen_ai.tool.call.id and an explicit parent from the call options, without a context manager', async () => {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    const parent = trace.getTracer('test').startSpan('caller');
    await c.callTool(
      'demo.echo',
      { id: 'x' },
      { tracing: { toolCallId: 'call_abc', parentContext: trace.setSpan(context.active(), parent) } },
    );
    parent.end();
    const [span] = named('execute_tool demo.echo');
    expect(span.attributes['gen_ai.tool.call.id']).toBe('call_abc');
    expect(parentId(span)).toBe(parent.spanContext().spanId);
    expect(span.spanContext().traceId).toBe(parent.spanContext().traceId);
  });

  it('with a registered context manager, the active span parents the call and the call span is active inside', async () => {
    context.setGlobalContextManager(new StorageContextManager());
    const seen: Array<string | undefined> = [];
    const echo: TransportFactory = () => ({
      type: 'probe',
      registerManual: async () => ({
        manual: {
          utcp_version: '1.0.1',
          manual_version: '1.0.0',
          tools: [{ name: 'see', description: '', inputs: {}, tool_call_template: { call_template_type: 'probe' } }],
        },
      }),
      callTool: async () => {
        await new Promise((r) => setImmediate(r));
        seen.push(trace.getActiveSpan()?.spanContext().spanId);
        return 'ok';
      },
      close: async () => {},
    });
    const c = await client({ probe: echo });
    await c.registerManual({ name: 'p', call_template_type: 'probe' });
    await trace.getTracer('test').startActiveSpan('user operation', async (outer) => {
      await c.callTool('p.see', {});
      outer.end();
    });
    const [outer] = named('user operation');
    const [span] = named('execute_tool p.see');
    expect(parentId(span)).toBe(outer.spanContext().spanId);
    expect(seen).toEqual([span.spanContext().spanId]);
  });

  it('records a retry published on utcp-kit:tool:retry during the call as a span event, redacted', async () => {
    const retry = channel('utcp-kit:tool:retry');
    const flaky: TransportFactory = () => ({
      type: 'flaky',
      registerManual: async () => ({
        manual: {
          utcp_version: '1.0.1',
          manual_version: '1.0.0',
          tools: [
            {
              name: 'go',
              description: '',
              inputs: {},
              tool_call_template: { call_template_type: 'flaky', token: '${TOKEN}' } as never,
            },
          ],
        },
      }),
      callTool: async (tool, _args, template) => {
        const token = (template as unknown as { token: string }).token;
        await new Promise((r) => setTimeout(r, 1));
        retry.publish({ tool: tool.name, manual: 'f', attempt: 1, delayMs: 25, reason: `HTTP 503 with ${token}` });
        return 'done';
      },
      close: async () => {},
    });
    const c = await UtcpClient.create({ variables: { f_TOKEN: SECRET } }, { transports: { flaky } });
    onTestFinished(() => c.close());
    await c.registerManual({ name: 'f', call_template_type: 'flaky' });
    // Outside any call: nobody's span gets it.
    retry.publish({ tool: 'f.go', manual: 'f', attempt: 9, delayMs: 1, reason: 'stray' });
    await expect(c.callTool('f.go', {})).resolves.toBe('done');

    const [span] = named('execute_tool f.go');
    expect(span.events.map((e) => [e.name, e.attributes])).toEqual([
      [
        'retry',
        {
          'utcp.retry.attempt': 1,
          'utcp.retry.delay_ms': 25,
          'utcp.retry.reason': expect.stringMatching(/^HTTP 503 with /),
        },
      ],
    ]);
    expect(exported(spans())).not.toContain(SECRET);
  });

  it('traces a streamed call as one span', async () => {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    const items = [];
    for await (const item of c.callToolStreaming('demo.echo', { id: 'st' })) items.push(item);
    expect(items).toHaveLength(1);
    const [span] = named('execute_tool demo.echo');
    expect(span.attributes).toMatchObject({ 'utcp.call_template_type': 'http', 'utcp.outcome': 'ok' });
  });

  it('a stream whose consumer stops early ends as cancelled; the span is active while the stream produces', async () => {
    context.setGlobalContextManager(new StorageContextManager());
    const seen: Array<string | undefined> = [];
    const streamer: TransportFactory = () => ({
      type: 'streamer',
      registerManual: async () => ({
        manual: {
          utcp_version: '1.0.1',
          manual_version: '1.0.0',
          tools: [
            { name: 'ticks', description: '', inputs: {}, tool_call_template: { call_template_type: 'streamer' } },
          ],
        },
      }),
      callTool: async () => 'unused',
      async *callToolStream() {
        for (let i = 0; i < 3; i++) {
          await new Promise((r) => setImmediate(r));
          seen.push(trace.getActiveSpan()?.spanContext().spanId);
          yield i;
        }
      },
      close: async () => {},
    });
    const c = await client({ streamer });
    await c.registerManual({ name: 's', call_template_type: 'streamer' });
    for await (const item of c.callToolStreaming('s.ticks', {})) if (item === 1) break;
    const [span] = named('execute_tool s.ticks');
    expect(span.attributes).toMatchObject({ 'utcp.call_template_type': 'streamer', 'utcp.outcome': 'cancelled' });
    expect(seen).toEqual([span.spanContext().spanId, span.spanContext().spanId]);
  });

  it('records nothing once the provider is unregistered', async () => {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    trace.disable();
    await c.callTool('demo.echo', { id: 'x' });
    expect(named('execute_tool demo.echo')).toEqual([]);
  });
});

describe('registration spans', () => {
  it('one register_manual span with transport, tool count and outcome', async () => {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    const [span] = named('register_manual demo');
    expect(span.kind).toBe(SpanKind.INTERNAL);
    expect(span.attributes).toEqual({
      'utcp.manual.name': 'demo',
      'utcp.call_template_type': 'http',
      'utcp.tool.count': 2,
      'utcp.outcome': 'ok',
    });
    expect(exported(spans())).not.toContain(SECRET);
  });

  it('a failed registration is an error span (error.type registration_failed), its messages left out', async () => {
    const s = await apiServer();
    const c = await client();
    const result = await c.registerManual({ name: 'gone', call_template_type: 'http', url: `${s.url}/missing-${ARG}` });
    expect(result.success).toBe(false);
    const [span] = named('register_manual gone');
    expect(span.attributes).toMatchObject({ 'utcp.outcome': 'error', 'error.type': 'registration_failed' });
    expect(span.attributes['utcp.tool.count']).toBeUndefined();
    expect(span.status.code).toBe(SpanStatusCode.ERROR);
    expect(exported(spans())).not.toContain(ARG);
  });
});

describe('agent spans', () => {
  async function runScripted() {
    const s = await apiServer();
    const c = await client();
    await registerDemo(c, s);
    const model = new ScriptedModel(
      [
        {
          ...toolCallsTurn({ name: 'demo__echo', args: { id: ARG }, id: 'call_7' }),
          usage: { inputTokens: 11, outputTokens: 3 },
          finishReason: 'tool_calls',
        },
        { ...textTurn('done'), usage: { inputTokens: 20, outputTokens: 5 }, finishReason: 'stop' },
      ],
      { modelId: 'gpt-test' },
    );
    const result = await runAgent({ client: c, model, messages: [userMessage('go')] });
    expect(result.text).toBe('done');
  }

  function checkTree() {
    const [run] = named('invoke_agent');
    const chats = named('chat gpt-test');
    const [tool] = named('execute_tool demo.echo');
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 31,
      'gen_ai.usage.output_tokens': 8,
      'utcp.outcome': 'completed',
    });
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.kind).toBe(SpanKind.CLIENT);
      expect(parentId(chat)).toBe(run.spanContext().spanId);
    }
    expect(chats[0].attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'gpt-test',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.response.finish_reasons': ['tool_calls'],
      'utcp.agent.step': 1,
      'utcp.outcome': 'ok',
    });
    expect(parentId(tool)).toBe(run.spanContext().spanId);
    expect(tool.attributes['gen_ai.tool.call.id']).toBe('call_7');
    expect(tool.spanContext().traceId).toBe(run.spanContext().traceId);
    const all = exported(spans());
    expect(all).not.toContain(ARG);
    expect(all).not.toContain(SECRET);
  }

  it('invoke_agent parents the chat and tool spans without a context manager', async () => {
    await runScripted();
    checkTree();
  });

  it('and with a context manager', async () => {
    context.setGlobalContextManager(new StorageContextManager());
    await runScripted();
    checkTree();
  });

  it('a failing model request is an error chat span and an error run span', async () => {
    const c = await client();
    const model = new ScriptedModel([
      () => {
        throw Object.assign(new Error(`rejected ${SECRET}`), { status: 429 });
      },
    ]);
    await expect(runAgent({ client: c, model, messages: [userMessage('go')] })).rejects.toThrow();
    const [chat] = named('chat scripted-model');
    const [run] = named('invoke_agent');
    expect(chat.attributes).toMatchObject({ 'error.type': '429', 'utcp.outcome': 'error' });
    expect(chat.status.code).toBe(SpanStatusCode.ERROR);
    expect(run.attributes).toMatchObject({ 'error.type': '429', 'utcp.outcome': 'error' });
    expect(exported(spans())).not.toContain(SECRET);
  });
});
