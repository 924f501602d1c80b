import { anthropicModel, openAIChatModel, type ChatModel } from '../../src/agent/index.js';

/** Where the model comes from, for the start-up line. */
export interface ModelChoice {
  model: ChatModel;
  description: string;
}

export const MODEL_ENV_HELP = `Set a model endpoint in the environment:
  OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL   any OpenAI-compatible server (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp, LM Studio)
  ANTHROPIC_API_KEY, ANTHROPIC_MODEL              Anthropic
or pass --demo to try it offline with a scripted model.`;

/**
 * The chat model configured by the environment: OpenAI-compatible when `OPENAI_BASE_URL` or `OPENAI_API_KEY`
 * is set, else Anthropic when `ANTHROPIC_API_KEY` is set, else undefined.
 */
export function modelFromEnv(env: NodeJS.ProcessEnv, options: { stream: boolean }): ModelChoice | undefined {
  const openaiBase = env.OPENAI_BASE_URL?.trim();
  const openaiKey = env.OPENAI_API_KEY?.trim();
  if (openaiBase || openaiKey) {
    const model = env.OPENAI_MODEL?.trim() || 'gpt-4.1-mini';
    const baseUrl = openaiBase || undefined;
    return {
      model: openAIChatModel({ model, baseUrl, apiKey: openaiKey || undefined, stream: options.stream }),
      description: `${model} via ${baseUrl ?? 'https://api.openai.com/v1'}`,
    };
  }
  const anthropicKey = env.ANTHROPIC_API_KEY?.trim();
  if (anthropicKey) {
    const model = env.ANTHROPIC_MODEL?.trim() || 'claude-sonnet-4-5';
    const baseUrl = env.ANTHROPIC_BASE_URL?.trim() || undefined;
    return {
      model: anthropicModel({ model, apiKey: anthropicKey, baseUrl, stream: options.stream }),
      description: `${model} via Anthropic`,
    };
  }
  return undefined;
}
