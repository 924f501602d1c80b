import { afterEach, describe, expect, it } from 'vitest';
import { ModelApiError, openAIChatModel, runAgent, userMessage, type AgentEvent } from '../../src/agent/index.js';
import { forecastInputs, weatherClient, type WeatherClient } from './helpers/weather-client.js';
import {
  openAIText,
  openAIToolCalls,
  startLlmServer,
  type LlmServer,
  type ScriptedReply,
} from './helpers/llm-server.js';

const API_KEY = 'sk-test-0123456789abcdef';

const forecastTool = {
  type: 'function',
  function: { name: 'weather__get_forecast', description: 'Weather forecast for a city', parameters: forecastInputs },
};
const alertsTool = {
  type: 'function',
  function: {
    name: 'weather__get_alerts',
    description: 'Weather alerts for a region',
    parameters: { type: 'object', properties: { region: { type: 'string' } }, required: ['region'] },
  },
};
const explodeTool = {
  type: 'function',
  function: { name: 'weather__explode', description: 'Always fails', parameters: { type: 'object', properties: {} } },
};
const allTools = [forecastTool, alertsTool, explodeTool];

let server: LlmServer | undefined;
let weather: WeatherClient | undefined;

afterEach(async () => {
  await server?.close();
  await weather?.client.close();
  server = undefined;
  weather = undefined;
});

async function setup(replies: ScriptedReply[], modelOptions: Partial<Parameters<typeof openAIChatModel>[0]> = {}) {
  server = await startLlmServer(replies);
  weather = await weatherClient();
  const model = openAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: API_KEY, model: 'test-model', ...modelOptions });
  return { server, weather, model };
}

const question = userMessage('What is the weather in Paris?');

describe('runAgent over the OpenAI wire format', () => {
  it('returns the text of a turn without tool calls and sends the tools with encoded names', async () => {
    const { server, weather, model } = await setup([openAIText('It is sunny.')]);
    const result = await runAgent({ client: weather.client, model, messages: [question], system: 'Be brief.' });
    expect(result.text).toBe('It is sunny.');
    expect(result.stepLimitReached).toBe(false);
    expect(result.usage).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(server.requests).toHaveLength(1);
    const req = server.requests[0];
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(req.body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'What is the weather in Paris?' },
      ],
      tools: allTools,
    });
  });

  it('runs one tool call and sends its result back with the tool_call_id', async () => {
    const { server, weather, model } = await setup([
      openAIToolCalls([{ id: 'call_a', name: 'weather__get_forecast', arguments: '{"city":"Paris"}' }]),
      openAIText('Clear, 21 °C.'),
    ]);
    const result = await runAgent({ client: weather.client, model, messages: [question] });
    expect(result.text).toBe('Clear, 21 °C.');
    expect(weather.calls).toEqual([{ tool: 'get_forecast', args: { city: 'Paris' } }]);
    expect(server.requests[1].body).toEqual({
      model: 'test-model',
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'weather__get_forecast', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '{"city":"Paris","temperature_c":21,"sky":"clear"}' },
      ],
      tools: allTools,
    });
    expect(result.messages.map((m) => m.type)).toEqual(['user', 'tool_calls', 'tool_result', 'assistant']);
    expect(result.messages[1]).toEqual({
      type: 'tool_calls',
      text: '',
      calls: [{ id: 'call_a', name: 'weather.get_forecast', arguments: '{"city":"Paris"}' }],
    });
    expect(result.usage).toEqual({ inputTokens: 30, outputTokens: 12 });
  });

  it('runs parallel calls concurrently and keeps the model order in the tool messages', async () => {
    const { server, model } = await setup([
      openAIToolCalls([
        { id: 'call_slow', name: 'timing__slow', arguments: '{}' },
        { id: 'call_fast', name: 'timing__fast', arguments: '{}' },
      ]),
      openAIText('done'),
    ]);
    const finished: string[] = [];
    let releaseSlow!: () => void;
    const fastDone = new Promise<void>((resolve) => (releaseSlow = resolve));
    await weather!.client.registerFunctions('timing', [
      {
        name: 'slow',
        handler: async () => {
          await fastDone;
          finished.push('slow');
          return 'slow result';
        },
      },
      {
        name: 'fast',
        handler: async () => {
          finished.push('fast');
          releaseSlow();
          return 'fast result';
        },
      },
    ]);
    await runAgent({ client: weather!.client, model, messages: [question], tools: ['timing.*'] });
    expect(finished).toEqual(['fast', 'slow']);
    const toolMessages = server.requests[1].body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'call_slow', content: 'slow result' },
      { role: 'tool', tool_call_id: 'call_fast', content: 'fast result' },
    ]);
  });

  it('reports malformed argument JSON to the model and goes on', async () => {
    const { server, weather, model } = await setup([
      openAIToolCalls([{ id: 'call_bad', name: 'weather__get_forecast', arguments: '{"city": "Par' }]),
      openAIToolCalls([{ id: 'call_good', name: 'weather__get_forecast', arguments: '{"city":"Paris"}' }]),
      openAIText('Clear.'),
    ]);
    const result = await runAgent({ client: weather.client, model, messages: [question] });
    expect(result.text).toBe('Clear.');
    const tool = server.requests[1].body.messages.at(-1);
    expect(tool.role).toBe('tool');
    expect(tool.tool_call_id).toBe('call_bad');
    expect(tool.content).toMatch(/^Error: weather__get_forecast: the arguments are not valid JSON/);
    expect(weather.calls).toEqual([{ tool: 'get_forecast', args: { city: 'Paris' } }]);
    expect(result.steps[0].toolResults[0].isError).toBe(true);
  });

  it('reports an unknown tool name to the model with the available tools', async () => {
    const { server, weather, model } = await setup([
      openAIToolCalls([{ id: 'call_x', name: 'get_weather', arguments: '{"city":"Paris"}' }]),
      openAIText('Sorry.'),
    ]);
    const result = await runAgent({ client: weather.client, model, messages: [question] });
    expect(result.text).toBe('Sorry.');
    expect(server.requests[1].body.messages.at(-2).tool_calls[0].function.name).toBe('get_weather');
    expect(server.requests[1].body.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_x',
      content:
        'Error: unknown tool "get_weather". Available tools: weather__get_forecast, weather__get_alerts, weather__explode.',
    });
    expect(weather.calls).toEqual([]);
  });

  it('reports arguments that fail the inputs schema, naming the problems', async () => {
    const { server, weather, model } = await setup([
      openAIToolCalls([{ id: 'call_s', name: 'weather__get_forecast', arguments: '{"days":30}' }]),
      openAIText('Which city?'),
    ]);
    await runAgent({ client: weather.client, model, messages: [question] });
    const content: string = server.requests[1].body.messages.at(-1).content;
    expect(content).toMatch(/^Error: invalid arguments for weather__get_forecast: /);
    expect(content).toContain('city: required');
    expect(content).toContain('days: must be <= 7');
    expect(weather.calls).toEqual([]);
  });

  it('reports a failing tool and lets the model answer', async () => {
    const events: AgentEvent[] = [];
    const { server, weather, model } = await setup([
      openAIToolCalls([{ id: 'call_e', name: 'weather__explode', arguments: '' }]),
      openAIText('The station is offline.'),
    ]);
    const result = await runAgent({
      client: weather.client,
      model,
      messages: [question],
      onEvent: (e) => events.push(e),
    });
    expect(result.text).toBe('The station is offline.');
    const tool = server.requests[1].body.messages.at(-1);
    expect(tool).toEqual({
      role: 'tool',
      tool_call_id: 'call_e',
      content: expect.stringMatching(
        /^Error: weather__explode failed \(TOOL_ERROR\): .*the weather station is offline/,
      ),
    });
    expect(events.find((e) => e.type === 'error')).toMatchObject({
      phase: 'tool_call',
      toolCallId: 'call_e',
      toolName: 'weather.explode',
    });
  });

  it('asks once more without tools when the step limit is reached, and says so', async () => {
    const call = (id: string) => openAIToolCalls([{ id, name: 'weather__get_alerts', arguments: '{"region":"IDF"}' }]);
    const { server, weather, model } = await setup([call('c1'), call('c2'), openAIText('Nothing to report.')]);
    const result = await runAgent({ client: weather.client, model, messages: [question], maxSteps: 2 });
    expect(result.stepLimitReached).toBe(true);
    expect(result.text).toBe('Nothing to report.');
    expect(server.requests).toHaveLength(3);
    expect(server.requests[1].body.tools).toEqual(allTools);
    const last = server.requests[2].body;
    expect(last).not.toHaveProperty('tools');
    expect(
      last.messages
        .filter((m: { role: string }) => m.role === 'tool')
        .map((m: { tool_call_id: string }) => m.tool_call_id),
    ).toEqual(['c1', 'c2']);
    expect(weather.calls).toHaveLength(2);
  });

  it('streams text deltas and assembles tool calls split across chunks', async () => {
    const chunk = (delta: unknown, finish: string | null = null) => ({
      id: 'c',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const { server, weather, model } = await setup(
      [
        {
          sse: [
            chunk({ role: 'assistant', content: 'Let me check. ' }),
            chunk({
              tool_calls: [
                {
                  index: 0,
                  id: 'call_s1',
                  type: 'function',
                  function: { name: 'weather__get_forecast', arguments: '' },
                },
              ],
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
            chunk({
              tool_calls: [
                {
                  index: 1,
                  id: 'call_s2',
                  type: 'function',
                  function: { name: 'weather__get_alerts', arguments: '{"region":"IDF"}' },
                },
              ],
            }),
            chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
            chunk({}, 'tool_calls'),
            {
              id: 'c',
              object: 'chat.completion.chunk',
              choices: [],
              usage: { prompt_tokens: 40, completion_tokens: 11 },
            },
          ],
          done: true,
        },
        { sse: [chunk({ content: 'Sunny' }), chunk({ content: ', 21 °C.' }), chunk({}, 'stop')], done: true },
      ],
      { stream: true },
    );
    const deltas: string[] = [];
    const result = await runAgent({
      client: weather.client,
      model,
      messages: [question],
      onEvent: (e) => e.type === 'text_delta' && deltas.push(e.text),
    });
    expect(deltas).toEqual(['Let me check. ', 'Sunny', ', 21 °C.']);
    expect(result.text).toBe('Sunny, 21 °C.');
    expect(server.requests[0].body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(server.requests[0].headers.accept).toBe('text/event-stream');
    expect(server.requests[1].body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'Let me check. ',
        tool_calls: [
          {
            id: 'call_s1',
            type: 'function',
            function: { name: 'weather__get_forecast', arguments: '{"city":"Paris"}' },
          },
          { id: 'call_s2', type: 'function', function: { name: 'weather__get_alerts', arguments: '{"region":"IDF"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_s1', content: '{"city":"Paris","temperature_c":21,"sky":"clear"}' },
      { role: 'tool', tool_call_id: 'call_s2', content: 'No alerts for IDF' },
    ]);
    expect(result.steps[0].usage).toEqual({ inputTokens: 40, outputTokens: 11 });
  });

  it('rejects with ModelApiError carrying the status and the provider message, never the API key', async () => {
    const { weather, model } = await setup([
      {
        json: { error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error' } },
        status: 401,
      },
    ]);
    const error = await runAgent({ client: weather.client, model, messages: [question] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelApiError);
    expect(error).toMatchObject({ status: 401, code: 'HTTP_STATUS', provider: 'openai' });
    expect((error as ModelApiError).bodyExcerpt).toContain('Incorrect API key provided');
    expect((error as Error).message).not.toContain(API_KEY);
    expect((error as ModelApiError).bodyExcerpt).not.toContain(API_KEY);
  });

  it('stops a model request in flight when the run is aborted', async () => {
    const { server, weather, model } = await setup([{ hold: true }]);
    const controller = new AbortController();
    const events: AgentEvent[] = [];
    const run = runAgent({
      client: weather.client,
      model,
      messages: [question],
      signal: controller.signal,
      onEvent: (e) => events.push(e),
    });
    await server.waitForRequests(1);
    controller.abort();
    await expect(run).rejects.toMatchObject({ name: 'UtcpAbortError', code: 'ABORTED' });
    expect(events.map((e) => e.type)).toEqual(['model_request']);
  });

  it('reports a failed model request as an error event before rejecting', async () => {
    const { weather, model } = await setup([{ text: 'upstream down', status: 503 }], { maxRetries: 0 });
    const events: AgentEvent[] = [];
    await expect(
      runAgent({ client: weather.client, model, messages: [question], onEvent: (e) => events.push(e) }),
    ).rejects.toMatchObject({ status: 503 });
    expect(events.at(-1)).toMatchObject({
      type: 'error',
      phase: 'model',
      step: 1,
      error: expect.objectContaining({ bodyExcerpt: 'upstream down' }),
    });
  });

  it('sends strict schemas when asked and drops the nulls strict mode adds before calling the tool', async () => {
    const { server, weather, model } = await setup(
      [
        openAIToolCalls([{ id: 'call_n', name: 'weather__get_forecast', arguments: '{"city":"Paris","days":null}' }]),
        openAIText('ok'),
      ],
      { strict: true },
    );
    await runAgent({ client: weather.client, model, messages: [question], tools: ['weather.get_forecast'] });
    expect(server.requests[0].body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather__get_forecast',
          description: 'Weather forecast for a city',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string', description: 'City name' },
              days: { type: ['integer', 'null'], minimum: 1, maximum: 7 },
            },
            required: ['city', 'days'],
            additionalProperties: false,
          },
          strict: true,
        },
      },
    ]);
    expect(weather.calls).toEqual([{ tool: 'get_forecast', args: { city: 'Paris' } }]);
  });
});
