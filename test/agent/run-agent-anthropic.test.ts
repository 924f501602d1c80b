import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel, ModelApiError, runAgent, userMessage } from '../../src/agent/index.js';
import { forecastInputs, weatherClient, type WeatherClient } from './helpers/weather-client.js';
import {
  anthropicText,
  anthropicToolUse,
  startLlmServer,
  type LlmServer,
  type ScriptedReply,
} from './helpers/llm-server.js';

const API_KEY = 'sk-ant-test-0123456789';

const allTools = [
  { name: 'weather__get_forecast', description: 'Weather forecast for a city', input_schema: forecastInputs },
  {
    name: 'weather__get_alerts',
    description: 'Weather alerts for a region',
    input_schema: { type: 'object', properties: { region: { type: 'string' } }, required: ['region'] },
  },
  { name: 'weather__explode', description: 'Always fails', input_schema: { type: 'object', properties: {} } },
];

let server: LlmServer | undefined;
let weather: WeatherClient | undefined;

afterEach(async () => {
  await server?.close();
  await weather?.client.close();
  server = undefined;
  weather = undefined;
});

async function setup(replies: ScriptedReply[], stream = false) {
  server = await startLlmServer(replies);
  weather = await weatherClient();
  const model = anthropicModel({ baseUrl: server.url, apiKey: API_KEY, model: 'claude-test', maxTokens: 1000, stream });
  return { server, weather, model };
}

const question = userMessage('What is the weather in Paris?');

describe('runAgent over the Anthropic Messages format', () => {
  it('returns the text answer and sends system, max_tokens, headers and tools', async () => {
    const { server, weather, model } = await setup([anthropicText('Sunny.')]);
    const result = await runAgent({ client: weather.client, model, messages: [question], system: 'Be brief.' });
    expect(result.text).toBe('Sunny.');
    expect(result.usage).toEqual({ inputTokens: 12, outputTokens: 4 });
    const req = server.requests[0];
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe(API_KEY);
    expect(req.headers['anthropic-version']).toBe('2023-06-01');
    expect(req.body).toEqual({
      model: 'claude-test',
      max_tokens: 1000,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools: allTools,
    });
  });

  it('runs one tool call and answers with a tool_result carrying the tool_use_id', async () => {
    const { server, weather, model } = await setup([
      anthropicToolUse([{ id: 'toolu_1', name: 'weather__get_forecast', input: { city: 'Paris' } }], 'Checking.'),
      anthropicText('Clear, 21 °C.'),
    ]);
    const result = await runAgent({ client: weather.client, model, messages: [question] });
    expect(result.text).toBe('Clear, 21 °C.');
    expect(server.requests[1].body.messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather__get_forecast', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"city":"Paris","temperature_c":21,"sky":"clear"}' },
        ],
      },
    ]);
  });

  it('puts the results of parallel calls in one user message, in the model order', async () => {
    const { server, weather, model } = await setup([
      anthropicToolUse([
        { id: 'toolu_a', name: 'weather__get_alerts', input: { region: 'IDF' } },
        { id: 'toolu_b', name: 'weather__get_forecast', input: { city: 'Lyon' } },
      ]),
      anthropicText('All good.'),
    ]);
    await runAgent({ client: weather.client, model, messages: [question] });
    expect(server.requests[1].body.messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_a', content: 'No alerts for IDF' },
        { type: 'tool_result', tool_use_id: 'toolu_b', content: '{"city":"Lyon","temperature_c":21,"sky":"clear"}' },
      ],
    });
  });

  it('marks unknown tools, schema failures and failing tools with is_error', async () => {
    const { server, weather, model } = await setup([
      anthropicToolUse([
        { id: 'toolu_u', name: 'lookup_weather', input: {} },
        { id: 'toolu_s', name: 'weather__get_forecast', input: { city: 42 } },
        { id: 'toolu_f', name: 'weather__explode', input: {} },
      ]),
      anthropicText('Trouble.'),
    ]);
    await runAgent({ client: weather.client, model, messages: [question] });
    const results = server.requests[1].body.messages[2].content;
    expect(results.map((r: { tool_use_id: string; is_error?: boolean }) => [r.tool_use_id, r.is_error])).toEqual([
      ['toolu_u', true],
      ['toolu_s', true],
      ['toolu_f', true],
    ]);
    expect(results[0].content).toMatch(/^Error: unknown tool "lookup_weather"/);
    expect(results[1].content).toMatch(/^Error: invalid arguments for weather__get_forecast: city: must be string/);
    expect(results[2].content).toContain('the weather station is offline');
    expect(weather.calls.map((c) => c.tool)).toEqual(['explode']);
  });

  it('keeps the tools and sends tool_choice none for the final turn at the step limit', async () => {
    const { server, weather, model } = await setup([
      anthropicToolUse([{ id: 'toolu_1', name: 'weather__get_alerts', input: { region: 'IDF' } }]),
      anthropicText('No alerts.'),
    ]);
    const result = await runAgent({ client: weather.client, model, messages: [question], maxSteps: 1 });
    expect(result.stepLimitReached).toBe(true);
    expect(server.requests[1].body.tool_choice).toEqual({ type: 'none' });
    expect(server.requests[1].body.tools).toEqual(allTools);
  });

  it('streams text and tool input deltas, and reports malformed streamed input to the model', async () => {
    const sse = (events: unknown[]): ScriptedReply => ({ sse: events, eventNames: true });
    const { server, weather, model } = await setup(
      [
        sse([
          {
            type: 'message_start',
            message: {
              id: 'msg_s',
              type: 'message',
              role: 'assistant',
              content: [],
              usage: { input_tokens: 50, output_tokens: 1 },
            },
          },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me ' } },
          { type: 'ping' },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'check.' } },
          { type: 'content_block_stop', index: 0 },
          {
            type: 'content_block_start',
            index: 1,
            content_block: { type: 'tool_use', id: 'toolu_s1', name: 'weather__get_forecast', input: {} },
          },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city": ' } },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
          { type: 'content_block_stop', index: 1 },
          {
            type: 'content_block_start',
            index: 2,
            content_block: { type: 'tool_use', id: 'toolu_s2', name: 'weather__get_alerts', input: {} },
          },
          {
            type: 'content_block_delta',
            index: 2,
            delta: { type: 'input_json_delta', partial_json: '{"region": "ID' },
          },
          { type: 'content_block_stop', index: 2 },
          { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 33 } },
          { type: 'message_stop' },
        ]),
        sse([
          { type: 'message_start', message: { usage: { input_tokens: 80, output_tokens: 1 } } },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Sunny.' } },
          { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
          { type: 'message_stop' },
        ]),
      ],
      true,
    );
    const deltas: string[] = [];
    const result = await runAgent({
      client: weather.client,
      model,
      messages: [question],
      onEvent: (e) => e.type === 'text_delta' && deltas.push(e.text),
    });
    expect(deltas).toEqual(['Let me ', 'check.', 'Sunny.']);
    expect(result.text).toBe('Sunny.');
    expect(result.usage).toEqual({ inputTokens: 130, outputTokens: 36 });
    expect(server.requests[0].body.stream).toBe(true);
    const [assistant, results] = server.requests[1].body.messages.slice(1);
    expect(assistant.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_s1', name: 'weather__get_forecast', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'toolu_s2', name: 'weather__get_alerts', input: {} },
    ]);
    expect(results.content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_s1',
      content: '{"city":"Paris","temperature_c":21,"sky":"clear"}',
    });
    expect(results.content[1]).toMatchObject({
      tool_use_id: 'toolu_s2',
      is_error: true,
      content: expect.stringContaining('not valid JSON'),
    });
  });

  it('turns an error event in the stream into a rejected run', async () => {
    const { weather, model } = await setup(
      [
        {
          sse: [
            { type: 'message_start', message: { usage: { input_tokens: 1 } } },
            { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
          ],
          eventNames: true,
        },
      ],
      true,
    );
    await expect(runAgent({ client: weather.client, model, messages: [question] })).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
      message: expect.stringContaining('overloaded_error: Overloaded'),
    });
  });

  it('rejects with ModelApiError on a non-2xx answer without echoing the API key', async () => {
    const { weather, model } = await setup([
      { json: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } }, status: 401 },
    ]);
    const error = await runAgent({ client: weather.client, model, messages: [question] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelApiError);
    expect(error).toMatchObject({
      status: 401,
      provider: 'anthropic',
      bodyExcerpt: 'authentication_error: invalid x-api-key',
    });
    expect((error as Error).message).not.toContain(API_KEY);
  });
});
