import { afterEach, describe, expect, it } from 'vitest';
import { ToolNameCodec, toAnthropicTools, toOpenAITools, toVercelAiTools } from '../../src/agent/index.js';
import type { JsonSchema } from '../../src/index.js';
import { forecastInputs, weatherClient, type WeatherClient } from './helpers/weather-client.js';

let weather: WeatherClient | undefined;
afterEach(async () => {
  await weather?.client.close();
  weather = undefined;
});

describe('tool export', () => {
  it('toOpenAITools gives function tools with encoded names the codec maps back', async () => {
    weather = await weatherClient();
    const names = new ToolNameCodec();
    const tools = toOpenAITools([(await weather.client.getTool('weather.get_forecast'))!], { names });
    expect(tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'weather__get_forecast',
          description: 'Weather forecast for a city',
          parameters: forecastInputs,
        },
      },
    ]);
    expect(names.decode(tools[0].function.name)).toBe('weather.get_forecast');
  });

  it('toOpenAITools marks strict tools only when the schema allows it', async () => {
    weather = await weatherClient();
    const tools = toOpenAITools(await weather.client.getTools(), { strict: true });
    expect(tools.map((t) => [t.function.name, t.function.strict])).toEqual([
      ['weather__get_forecast', true],
      ['weather__get_alerts', true],
      ['weather__explode', undefined],
    ]);
  });

  it('toAnthropicTools gives input_schema with an object root', async () => {
    weather = await weatherClient();
    const tools = toAnthropicTools(await weather.client.getTools());
    expect(tools[0]).toEqual({
      name: 'weather__get_forecast',
      description: 'Weather forecast for a city',
      input_schema: forecastInputs,
    });
    expect(tools[2]).toEqual({
      name: 'weather__explode',
      description: 'Always fails',
      input_schema: { type: 'object', properties: {} },
    });
  });

  it('caps long descriptions', () => {
    const long = {
      name: 'm.t',
      description: 'd'.repeat(5000),
      inputs: {},
      outputs: {},
      tags: [],
      tool_call_template: { call_template_type: 'direct' },
    };
    expect(toAnthropicTools([long], { maxDescriptionChars: 100 })[0].description).toHaveLength(100);
  });

  it('toVercelAiTools wraps schemas with the given jsonSchema helper and executes through the client', async () => {
    weather = await weatherClient();
    const wrapped: JsonSchema[] = [];
    const jsonSchema = (schema: JsonSchema) => (wrapped.push(schema), { wrapped: schema });
    const tools = toVercelAiTools(weather.client, await weather.client.getTools(), { jsonSchema });
    expect(Object.keys(tools)).toEqual(['weather__get_forecast', 'weather__get_alerts', 'weather__explode']);
    expect(tools.weather__get_forecast.description).toBe('Weather forecast for a city');
    expect(tools.weather__get_forecast.inputSchema).toEqual({ wrapped: forecastInputs });
    expect(wrapped).toHaveLength(3);
    const controller = new AbortController();
    await expect(
      tools.weather__get_forecast.execute({ city: 'Oslo' }, { abortSignal: controller.signal }),
    ).resolves.toEqual({ city: 'Oslo', temperature_c: 21, sky: 'clear' });
    expect(weather.calls).toEqual([{ tool: 'get_forecast', args: { city: 'Oslo' } }]);
    await expect(tools.weather__explode.execute({})).rejects.toMatchObject({ code: 'TOOL_ERROR' });
  });

  it('toVercelAiTools passes the plain JSON Schema when no wrapper is given', async () => {
    weather = await weatherClient();
    const tools = toVercelAiTools(weather.client, await weather.client.getTools());
    expect(tools.weather__get_alerts.inputSchema).toEqual({
      type: 'object',
      properties: { region: { type: 'string' } },
      required: ['region'],
    });
  });
});
