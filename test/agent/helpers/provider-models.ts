/** A built-in ChatModel for each provider, pointed at a local replica. */
import {
  anthropicModel,
  geminiModel,
  openAIChatModel,
  responsesModel,
  type ChatModel,
} from '../../../src/agent/index.js';
import type { Provider } from './provider-replicas.js';

export const REPLICA_KEY = 'test-key-0123456789';

export function modelFor(
  provider: Provider,
  url: string,
  stream: boolean,
  extra: Record<string, unknown> = {},
): ChatModel {
  const common = { apiKey: REPLICA_KEY, stream, maxRetries: 0, ...extra };
  switch (provider) {
    case 'openai':
      return openAIChatModel({ baseUrl: `${url}/v1`, model: 'gpt-test', ...common });
    case 'responses':
      return responsesModel({ baseUrl: `${url}/v1`, model: 'gpt-test', ...common });
    case 'anthropic':
      return anthropicModel({ baseUrl: url, model: 'claude-test', maxTokens: 2048, ...common });
    case 'gemini':
      return geminiModel({ baseUrl: `${url}/v1beta`, model: 'gemini-test', ...common });
  }
}
