/** A UtcpClient with a few in-process tools, as agents see them. */
import { UtcpClient } from '../../../src/index.js';
import type { JsonObject } from '../../../src/index.js';

export const forecastInputs = {
  type: 'object',
  properties: {
    city: { type: 'string', description: 'City name' },
    days: { type: 'integer', minimum: 1, maximum: 7 },
  },
  required: ['city'],
};

export interface WeatherClient {
  client: UtcpClient;
  /** Arguments each tool received, in call order. */
  calls: Array<{ tool: string; args: JsonObject }>;
}

export async function weatherClient(): Promise<WeatherClient> {
  const client = await UtcpClient.create();
  const calls: WeatherClient['calls'] = [];
  const result = await client.registerFunctions('weather', [
    {
      name: 'get_forecast',
      description: 'Weather forecast for a city',
      inputs: forecastInputs,
      tags: ['read'],
      handler: async (args) => {
        calls.push({ tool: 'get_forecast', args });
        return { city: args.city, temperature_c: 21, sky: 'clear' };
      },
    },
    {
      name: 'get_alerts',
      description: 'Weather alerts for a region',
      inputs: { type: 'object', properties: { region: { type: 'string' } }, required: ['region'] },
      tags: ['read'],
      handler: async (args) => {
        calls.push({ tool: 'get_alerts', args });
        return `No alerts for ${args.region}`;
      },
    },
    {
      name: 'explode',
      description: 'Always fails',
      inputs: { type: 'object', properties: {} },
      handler: async () => {
        calls.push({ tool: 'explode', args: {} });
        throw new Error('the weather station is offline');
      },
    },
  ]);
  if (!result.success) throw new Error(`registerFunctions failed: ${result.errors.join('; ')}`);
  return { client, calls };
}
