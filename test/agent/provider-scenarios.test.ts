/**
 * The same scripted scenarios for every built-in provider, JSON and streaming, against local replicas of each
 * API's wire format that refuse what the real API refuses (test/agent/helpers/provider-replicas.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runAgent, userMessage, type AgentEvent } from '../../src/agent/index.js';
import { modelFor } from './helpers/provider-models.js';
import { startLlmServer, type LlmServer } from './helpers/llm-server.js';
import { PROVIDERS, REPLICA_TURN_USAGE, replyFor, type Provider, type Turn } from './helpers/provider-replicas.js';
import { weatherClient, type WeatherClient } from './helpers/weather-client.js';

let server: LlmServer | undefined;
let weather: WeatherClient | undefined;
afterEach(async () => {
  await server?.close();
  await weather?.client.close();
  server = undefined;
  weather = undefined;
});

async function run(provider: Provider, stream: boolean, turns: Turn[], extra: Record<string, unknown> = {}) {
  server = await startLlmServer(turns.map((t) => replyFor(provider, t, stream)));
  weather = await weatherClient();
  const events: AgentEvent[] = [];
  const deltas: string[] = [];
  const result = await runAgent({
    client: weather.client,
    model: modelFor(provider, server.url, stream, extra),
    messages: [userMessage('Weather in Paris and alerts for IDF?')],
    system: 'Be brief.',
    onEvent: (e) => (events.push(e), e.type === 'text_delta' && deltas.push(e.text)),
  });
  return { result, events, deltas, server, weather };
}

const multiStep = (thinking: boolean): Turn[] => [
  { calls: [{ id: 'call_a', name: 'weather__get_forecast', args: { city: 'Paris' } }], thinking },
  { calls: [{ id: 'call_b', name: 'weather__get_alerts', args: { region: 'IDF' } }], thinking },
  { text: 'Clear, 21 °C; no alerts.' },
];
const parallel = (thinking: boolean): Turn[] => [
  {
    text: 'Checking both.',
    calls: [
      { id: 'call_p1', name: 'weather__get_forecast', args: { city: 'Paris' } },
      { id: 'call_p2', name: 'weather__get_alerts', args: { region: 'IDF' } },
    ],
    thinking,
  },
  { text: 'Clear; no alerts.' },
];

describe.each(PROVIDERS)('%s replica', (provider) => {
  for (const stream of [false, true]) {
    const mode = stream ? 'streaming' : 'JSON';
    it(`multi-step run with thinking (${mode})`, async () => {
      const { result, weather, server, deltas } = await run(
        provider,
        stream,
        multiStep(true),
        provider === 'anthropic' ? { thinkingBudgetTokens: 1024, interleavedThinking: true } : {},
      );
      expect(result.status).toBe('completed');
      expect(result.text).toBe('Clear, 21 °C; no alerts.');
      expect(weather.calls).toEqual([
        { tool: 'get_forecast', args: { city: 'Paris' } },
        { tool: 'get_alerts', args: { region: 'IDF' } },
      ]);
      expect(server.requests).toHaveLength(3);
      expect(result.usage).toEqual(
        Object.fromEntries(Object.entries(REPLICA_TURN_USAGE[provider]).map(([k, v]) => [k, v * 3])),
      );
      if (stream) expect(deltas.join('')).toBe('Clear, 21 °C; no alerts.');
      if (provider === 'anthropic') {
        expect(server.requests[0].headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
        expect(server.requests[0].body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
        expect(server.requests[2].body.messages[3].content.slice(0, 2)).toEqual([
          { type: 'thinking', thinking: 'Let me look.', signature: 'sig-Let me look.' },
          { type: 'redacted_thinking', data: 'opaque-blob' },
        ]);
      }
      if (provider === 'responses')
        expect(server.requests[2].body.input.filter((i: { type: string }) => i.type === 'reasoning')).toHaveLength(2);
      // The paused-and-resumed state is JSON: provider data included.
      expect(JSON.parse(JSON.stringify(result.messages))).toEqual(result.messages);
    });

    it(`parallel tool calls in one turn (${mode})`, async () => {
      const { result, weather, server } = await run(provider, stream, parallel(false));
      expect(result.text).toBe('Clear; no alerts.');
      expect(weather.calls.map((c) => c.tool).sort()).toEqual(['get_alerts', 'get_forecast']);
      expect(result.steps[0].toolResults.map((r) => r.toolCallId)).toEqual(
        provider === 'gemini' ? [expect.any(String), expect.any(String)] : ['call_p1', 'call_p2'],
      );
      expect(server.requests).toHaveLength(2);
    });
  }

  it('the replica refuses what the real API refuses (a tool result that answers no call)', async () => {
    server = await startLlmServer([replyFor(provider, { text: 'never' }, false)]);
    weather = await weatherClient();
    const messages = [
      userMessage('hi'),
      { type: 'tool_calls' as const, text: '', calls: [{ id: 'call_x', name: 'weather.get_alerts', arguments: '{}' }] },
    ];
    // A conversation ending with calls that were never answered, as a buggy caller would send.
    await expect(
      runAgent({ client: weather.client, model: modelFor(provider, server.url, false), messages }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe('thinking blocks are required back by the Anthropic replica', () => {
  it('refuses a tool turn whose thinking blocks were dropped, as the real API does', async () => {
    server = await startLlmServer([replyFor('anthropic', { text: 'never' }, false)]);
    weather = await weatherClient();
    const messages = [
      userMessage('hi'),
      {
        type: 'tool_calls' as const,
        text: '',
        calls: [{ id: 'toolu_1', name: 'weather.get_alerts', arguments: '{"region":"IDF"}' }],
      },
      {
        type: 'tool_result' as const,
        toolCallId: 'toolu_1',
        toolName: 'weather.get_alerts',
        content: 'none',
        isError: false,
      },
    ];
    const error = await runAgent({
      client: weather.client,
      model: modelFor('anthropic', server.url, false, { thinkingBudgetTokens: 1024 }),
      messages,
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      status: 400,
      bodyExcerpt: expect.stringContaining('Expected `thinking` or `redacted_thinking`, but found `tool_use`'),
    });
  });

  it('sends prompt-caching hints on the system prompt and the last tool when asked', async () => {
    server = await startLlmServer([replyFor('anthropic', { text: 'ok' }, false)]);
    weather = await weatherClient();
    await runAgent({
      client: weather.client,
      model: modelFor('anthropic', server.url, false, { cacheControl: { system: true, tools: true } }),
      messages: [userMessage('hi')],
      system: 'Be brief.',
    });
    const body = server.requests[0].body;
    expect(body.system).toEqual([{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }]);
    expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    expect(body.tools[0].cache_control).toBeUndefined();
  });
});
