/** Retries of model requests and secrets on every error path, against local servers speaking the providers' formats. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  anthropicModel,
  ModelApiError,
  openAIChatModel,
  runAgent,
  userMessage,
  type AgentEvent,
} from '../../src/agent/index.js';
import { backoffDelayMs, retryPolicy, serverRetryDelayMs } from '../../src/agent/providers/retry.js';
import { openAIText, startLlmServer, type LlmServer, type ScriptedReply } from './helpers/llm-server.js';
import { weatherClient, type WeatherClient } from './helpers/weather-client.js';

const KEY = 'sk-secret-key-0123456789abcdef';
let server: LlmServer | undefined;
let weather: WeatherClient | undefined;
afterEach(async () => {
  await server?.close();
  await weather?.client.close();
  server = undefined;
  weather = undefined;
});

/** Records the waits instead of sleeping. */
function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number, signal: AbortSignal) => void (signal.throwIfAborted(), waits.push(ms)) };
}

async function openAI(replies: ScriptedReply[], extra: Partial<Parameters<typeof openAIChatModel>[0]> = {}) {
  server = await startLlmServer(replies);
  weather = await weatherClient();
  return openAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: KEY, model: 'm', ...extra });
}

const rateLimited = (headers: Record<string, string>): ScriptedReply => ({
  json: { error: { message: 'Rate limit reached', type: 'rate_limit_error' } },
  status: 429,
  headers: { 'x-request-id': 'req_429', ...headers },
});

describe('model request retries', () => {
  it('429 → 429 → 200 with Retry-After succeeds with two model_retry events and the waits the server asked for', async () => {
    const { waits, sleep } = recordingSleep();
    const model = await openAI(
      [rateLimited({ 'retry-after': '1' }), rateLimited({ 'retry-after-ms': '250' }), openAIText('Sunny.')],
      { retry: { sleep } },
    );
    const events: AgentEvent[] = [];
    const result = await runAgent({
      client: weather!.client,
      model,
      messages: [userMessage('hi')],
      onEvent: (e) => events.push(e),
    });
    expect(result.text).toBe('Sunny.');
    expect(waits).toEqual([1000, 250]);
    const retries = events.filter((e) => e.type === 'model_retry');
    expect(retries).toMatchObject([
      {
        type: 'model_retry',
        step: 1,
        provider: 'openai',
        attempt: 1,
        maxRetries: 2,
        delayMs: 1000,
        status: 429,
        requestId: 'req_429',
      },
      { type: 'model_retry', step: 1, attempt: 2, delayMs: 250, status: 429 },
    ]);
    expect(server!.requests).toHaveLength(3);
  });

  it('gives up after maxRetries with a typed error carrying the status, the request id and the attempts', async () => {
    const { sleep } = recordingSleep();
    const model = await openAI([rateLimited({}), rateLimited({}), rateLimited({ 'x-request-id': 'req_last' })], {
      retry: { sleep },
    });
    const error = await runAgent({ client: weather!.client, model, messages: [userMessage('hi')] }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ModelApiError);
    expect(error).toMatchObject({ status: 429, requestId: 'req_last', attempts: 3, provider: 'openai' });
  });

  it('retries 5xx and a connection reset before any byte, not a 400', async () => {
    const { waits, sleep } = recordingSleep();
    const model = await openAI([{ text: 'overloaded', status: 503 }, { resetAfter: '' }, openAIText('ok')], {
      retry: { sleep, random: () => 0.5 },
    });
    const events: AgentEvent[] = [];
    expect(
      (
        await runAgent({
          client: weather!.client,
          model,
          messages: [userMessage('hi')],
          onEvent: (e) => events.push(e),
        })
      ).text,
    ).toBe('ok');
    expect(waits).toEqual([250, 500]); // full jitter: random × 500 × 2^attempt
    expect(events.filter((e) => e.type === 'model_retry').map((e) => (e as { status?: number }).status)).toEqual([
      503,
      undefined,
    ]);

    await server!.close();
    const model2 = await openAI([{ json: { error: { message: 'bad request' } }, status: 400 }], { retry: { sleep } });
    await expect(
      runAgent({ client: weather!.client, model: model2, messages: [userMessage('hi')] }),
    ).rejects.toMatchObject({ status: 400, attempts: 1 });
  });

  it('does not retry a connection lost after output started', async () => {
    const { sleep } = recordingSleep();
    const model = await openAI([{ resetAfter: '{"id":"x","choices":[' }, openAIText('never')], { retry: { sleep } });
    await expect(runAgent({ client: weather!.client, model, messages: [userMessage('hi')] })).rejects.toMatchObject({
      code: 'TRANSPORT_FAILED',
    });
    expect(server!.requests).toHaveLength(1);
  });

  it('a retry wait ends as soon as the run is aborted', async () => {
    const model = await openAI([rateLimited({ 'retry-after': '30' }), openAIText('never')]);
    const controller = new AbortController();
    const run = runAgent({
      client: weather!.client,
      model,
      messages: [userMessage('hi')],
      signal: controller.signal,
      onEvent: (e) => e.type === 'model_retry' && controller.abort(),
    });
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    expect(server!.requests).toHaveLength(1);
  });

  it('reads the providers’ rate-limit headers and Gemini’s RetryInfo when Retry-After is absent', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(
      serverRetryDelayMs(
        {
          'x-ratelimit-remaining-requests': '0',
          'x-ratelimit-reset-requests': '6m0s',
          'x-ratelimit-remaining-tokens': '10',
          'x-ratelimit-reset-tokens': '1s',
        },
        '',
        now,
      ),
    ).toBe(360_000);
    expect(
      serverRetryDelayMs(
        { 'anthropic-ratelimit-requests-remaining': '0', 'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:07Z' },
        '',
        now,
      ),
    ).toBe(7000);
    expect(
      serverRetryDelayMs(
        {},
        JSON.stringify({
          error: { details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '12s' }] },
        }),
        now,
      ),
    ).toBe(12_000);
    expect(serverRetryDelayMs({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }, '', now)).toBe(3000);
    expect(serverRetryDelayMs({}, 'not json', now)).toBeUndefined();
    const policy = retryPolicy({ random: () => 0.999 }, undefined);
    expect([0, 1, 2, 10].map((a) => backoffDelayMs(a, policy))).toEqual([499, 999, 1998, 59_940]);
  });
});

/** Every string an error carries, through its cause chain. */
function allText(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, i = 0; e && i < 10; e = (e as { cause?: unknown }).cause, i++) {
    if (typeof e !== 'object') parts.push(String(e));
    else for (const k of Object.getOwnPropertyNames(e)) parts.push(String((e as Record<string, unknown>)[k]));
  }
  return parts.join('\n');
}

describe('secrets never in errors or events', () => {
  const echo = `invalid x-api-key ${KEY}`;
  const cases: Array<[string, 'openai' | 'anthropic', ScriptedReply, boolean]> = [
    ['an HTTP error status', 'openai', { json: { error: { message: echo } }, status: 401 }, false],
    ['an error event inside the OpenAI stream', 'openai', { sse: [{ error: { message: echo } }] }, true],
    [
      'an error event inside the Anthropic stream',
      'anthropic',
      {
        sse: [
          { type: 'message_start', message: { usage: { input_tokens: 1 } } },
          { type: 'error', error: { type: 'overloaded_error', message: echo } },
        ],
        eventNames: true,
      },
      true,
    ],
    [
      'a body that is not JSON',
      'anthropic',
      { text: `<html>${echo}</html>`, status: 200, contentType: 'application/json' },
      false,
    ],
    ['a connection reset after an echo', 'openai', { resetAfter: `{"error":"${echo}"` }, false],
  ];
  for (const [what, provider, reply, stream] of cases) {
    it(`keeps the key out on ${what}`, async () => {
      server = await startLlmServer([reply]);
      weather = await weatherClient();
      const model =
        provider === 'openai'
          ? openAIChatModel({ baseUrl: `${server.url}/v1`, apiKey: KEY, model: 'm', stream, maxRetries: 0 })
          : anthropicModel({ baseUrl: server.url, apiKey: KEY, model: 'm', stream, maxRetries: 0 });
      const events: AgentEvent[] = [];
      const error = await runAgent({
        client: weather.client,
        model,
        messages: [userMessage('hi')],
        onEvent: (e) => events.push(e),
      }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Error);
      expect(allText(error)).not.toContain(KEY);
      expect(events.at(-1)).toMatchObject({ type: 'error', phase: 'model' });
      expect(events.map((e) => allText((e as { error?: unknown }).error) + JSON.stringify(e)).join('\n')).not.toContain(
        KEY,
      );
      // Where the provider's message is kept, it is kept with the key cut out.
      if (stream || what.includes('status')) expect(allText(error)).toContain('invalid x-api-key [redacted]');
    });
  }
});
