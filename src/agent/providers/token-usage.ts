import type { TokenUsage } from '../chat-model.js';

const positive = (n: unknown): n is number => typeof n === 'number' && n > 0;

/** The provider-neutral usage record from already-picked wire counts; zero or missing extras are left out. */
export function tokenUsage(input: number, output: unknown, cached: unknown, reasoning: unknown): TokenUsage {
  return {
    inputTokens: input,
    outputTokens: typeof output === 'number' ? output : 0,
    ...(positive(cached) ? { cachedInputTokens: cached } : {}),
    ...(positive(reasoning) ? { reasoningTokens: reasoning } : {}),
  };
}
