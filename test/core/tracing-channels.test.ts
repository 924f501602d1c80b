/**
 * Tracing without OpenTelemetry (docs/design/observability.md#channels): the `utcp-kit:*` diagnostics channels carry
 * the same events with names and ids only; and with `@opentelemetry/api` missing, nothing is looked up until a
 * provider is registered, and every call still works (docs/design/observability.md#absent).
 */
import { execFile } from 'node:child_process';
import { tracingChannel } from 'node:diagnostics_channel';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runAgent, userMessage } from '../../src/agent/index.js';
import { UtcpClient } from '../../src/index.js';
import { ScriptedModel, textTurn, toolCallsTurn } from '../../src/testing/index.js';

const SECRET = 'dc-secret-3e8a41';
const ARG = 'dc-argument-90cf';

type Seen = Array<[string, Record<string, unknown>]>;

/** Subscribes to every event of a tracing channel for the rest of the test; records copies of the messages. */
function listen(name: string): Seen {
  const seen: Seen = [];
  const handler = (event: string) => (message: unknown) =>
    seen.push([event, { ...(message as Record<string, unknown>) }]);
  const handlers = {
    start: handler('start'),
    end: handler('end'),
    asyncStart: handler('asyncStart'),
    asyncEnd: handler('asyncEnd'),
    error: handler('error'),
  };
  const channel = tracingChannel(name);
  channel.subscribe(handlers);
  onTestFinished(() => {
    channel.unsubscribe(handlers);
  });
  return seen;
}

describe('diagnostics channels', () => {
  it('utcp-kit:tool, utcp-kit:register, utcp-kit:model and utcp-kit:agent publish start/end/asyncStart/asyncEnd with names only', async () => {
    const tool = listen('utcp-kit:tool');
    const register = listen('utcp-kit:register');
    const model = listen('utcp-kit:model');
    const agent = listen('utcp-kit:agent');
    const c = await UtcpClient.create({ variables: { local_KEY: SECRET } });
    onTestFinished(() => c.close());
    await c.registerFunctions('local', [{ name: 'echo', handler: (args) => ({ got: args }) }]);
    const m = new ScriptedModel(
      [
        toolCallsTurn({ name: 'local__echo', args: { v: ARG }, id: 'call_1' }),
        { ...textTurn('done'), usage: { inputTokens: 4, outputTokens: 2 } },
      ],
      { modelId: 'm1' },
    );
    await runAgent({ client: c, model: m, messages: [userMessage('go')] });

    expect(register.map(([e]) => e)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(register.at(-1)?.[1]).toEqual({
      manual: 'local',
      callTemplateType: 'direct',
      toolCount: 1,
      outcome: 'ok',
    });
    expect(tool.map(([e]) => e)).toEqual(['start', 'end', 'asyncStart', 'asyncEnd']);
    expect(tool[0][1]).toEqual({ tool: 'local.echo', manual: 'local', toolCallId: 'call_1' });
    expect(tool.at(-1)?.[1]).toEqual({
      tool: 'local.echo',
      manual: 'local',
      toolCallId: 'call_1',
      callTemplateType: 'direct',
      outcome: 'ok',
    });
    expect(model.map(([e]) => e)).toEqual([
      ...['start', 'end', 'asyncStart', 'asyncEnd'],
      ...['start', 'end', 'asyncStart', 'asyncEnd'],
    ]);
    expect(model.at(-1)?.[1]).toMatchObject({
      provider: 'scripted',
      model: 'm1',
      step: 2,
      inputTokens: 4,
      outputTokens: 2,
      outcome: 'ok',
    });
    expect(agent.at(-1)?.[1]).toMatchObject({ provider: 'scripted', model: 'm1', outcome: 'completed', steps: 2 });
    const all = JSON.stringify([tool, register, model, agent]);
    expect(all).not.toContain(ARG);
    expect(all).not.toContain(SECRET);
  });

  it('a failing call publishes error with the redacted error and its type', async () => {
    const tool = listen('utcp-kit:tool');
    const c = await UtcpClient.create({});
    onTestFinished(() => c.close());
    await c.registerFunctions('local', [
      {
        name: 'boom',
        handler: () => {
          throw new Error('kaput');
        },
      },
    ]);
    await expect(c.callTool('local.boom', {})).rejects.toThrow('kaput');
    expect(tool.map(([e]) => e)).toEqual(['start', 'end', 'error', 'asyncStart', 'asyncEnd']);
    const [, message] = tool[2];
    expect(message).toMatchObject({ outcome: 'error', errorType: expect.any(String) });
    expect(message.error).toBeInstanceOf(Error);
  });

  it('publishes nothing and creates no message when no one subscribes', async () => {
    const c = await UtcpClient.create({});
    onTestFinished(() => c.close());
    await c.registerFunctions('local', [{ name: 'one', handler: () => 1 }]);
    // Subscribing afterwards sees only what happens from then on.
    const tool = listen('utcp-kit:tool');
    expect(tool).toEqual([]);
    await c.callTool('local.one', {});
    expect(tool).toHaveLength(4);
  });
});

describe('without @opentelemetry/api', () => {
  it('looks nothing up while no provider is registered, and calls, registrations and runs work when the import fails', {
    timeout: 30_000,
  }, async () => {
    const script = resolve(__dirname, '../fixtures/tracing/absent-otel.mjs');
    const { stdout } = await promisify(execFile)(process.execPath, [script], { timeout: 20_000 });
    const out = JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
    const works = { registered: true, sum: 5, agent: 'ok', toolResult: '2' };
    expect(out).toEqual({
      withoutProvider: works,
      attemptsWithoutProvider: 0,
      withProvider: works,
      attempts: ['@opentelemetry/api'],
    });
  });
});
