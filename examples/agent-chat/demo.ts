/** `--demo`: an offline run with in-process tools and a scripted stand-in for the model. */
import type { ChatRequest, ChatResponse } from '../../src/agent/index.js';
import type { DirectFunction } from '../../src/index.js';
import { ScriptedModel } from '../../src/testing/index.js';

export const DEMO_PROMPT = 'What is the weather in Paris?';

const CITIES: Record<string, { temp_c: number; sky: string }> = {
  paris: { temp_c: 14, sky: 'light rain' },
  tokyo: { temp_c: 21, sky: 'clear' },
};

/** The demo manual's tools. */
export const demoTools: DirectFunction[] = [
  {
    name: 'current_weather',
    description: 'Current weather conditions for a city',
    tags: ['weather'],
    inputs: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    handler: ({ city }) => {
      const found = CITIES[String(city).toLowerCase()];
      if (!found) throw new Error(`unknown city ${String(city)}`);
      return { city, ...found };
    },
  },
];

function lastToolResult(request: ChatRequest): string {
  const result = [...request.messages].reverse().find((m) => m.type === 'tool_result');
  return result && result.type === 'tool_result' ? result.content : '(no result)';
}

/** A model that calls the weather tool for the city in the prompt, then answers from what the tool returned. */
export function demoModel(): ScriptedModel {
  return new ScriptedModel(
    [
      (request): ChatResponse => {
        const tool = request.tools.find((t) => t.name.endsWith('current_weather'));
        if (!tool) return { text: 'The demo needs its weather tool.', toolCalls: [] };
        const prompt = [...request.messages].reverse().find((m) => m.type === 'user');
        const city = (prompt?.type === 'user' && /\b(?:in|for)\s+([A-Za-z]+)/i.exec(prompt.text)?.[1]) || 'Paris';
        return { text: '', toolCalls: [{ id: 'call_demo_1', name: tool.name, arguments: JSON.stringify({ city }) }] };
      },
      (request): ChatResponse => ({
        text: `(scripted demo model) The weather tool answered: ${lastToolResult(request)}`,
        toolCalls: [],
      }),
    ],
    { modelId: 'scripted-demo' },
  );
}
