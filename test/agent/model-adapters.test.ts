import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { anthropicModel, openAIChatModel, type ChatRequest } from '../../src/agent/index.js';
import { TransportError, UtcpAbortError, UtcpTimeoutError } from '../../src/index.js';
import { openAIText, startLlmServer, type LlmServer } from './helpers/llm-server.js';

let server: LlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request: ChatRequest = { messages: [{ type: 'user', text: 'hi' }], tools: [], toolChoice: 'auto' };

describe('model adapters', () => {
  it('keep the base URL path and send extra headers and body fields', async () => {
    server = await startLlmServer([openAIText('ok')]);
    const model = openAIChatModel({
      baseUrl: `${server.url}/api/v1/`,
      model: 'm',
      headers: { 'x-title': 'utcp-kit' },
      body: { temperature: 0 },
    });
    await model.generate(request, { signal: new AbortController().signal });
    expect(server.requests[0].path).toBe('/api/v1/chat/completions');
    expect(server.requests[0].headers['x-title']).toBe('utcp-kit');
    expect(server.requests[0].headers.authorization).toBeUndefined();
    expect(server.requests[0].body).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0,
    });
  });

  it('keep the query of the base URL (e.g. api-version)', async () => {
    server = await startLlmServer([openAIText('ok')]);
    const model = openAIChatModel({
      baseUrl: `${server.url}/openai/deployments/d1?api-version=2024-10-21`,
      model: 'm',
    });
    await model.generate(request, { signal: new AbortController().signal });
    expect(server.requests[0].path).toBe('/openai/deployments/d1/chat/completions?api-version=2024-10-21');
  });

  it('time out with UtcpTimeoutError when the server never answers', async () => {
    server = await startLlmServer([{ hold: true }]);
    const model = anthropicModel({ baseUrl: server.url, model: 'm', timeoutMs: 100 });
    const error = await model.generate(request, { signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UtcpTimeoutError);
    expect(error).toMatchObject({ code: 'TIMEOUT', timeoutMs: 100 });
  });

  it('reject with UtcpAbortError when the caller aborts a request in flight', async () => {
    server = await startLlmServer([{ hold: true }]);
    const model = openAIChatModel({ baseUrl: server.url, model: 'm' });
    const controller = new AbortController();
    const pending = model.generate(request, { signal: controller.signal });
    await server.waitForRequests(1);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(UtcpAbortError);
  });

  it('wrap connection failures in TransportError naming the endpoint without the API key', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const model = openAIChatModel({
      baseUrl: `http://127.0.0.1:${port}/v1?key=secret`,
      model: 'm',
      apiKey: 'sk-secret-key',
    });
    const error = await model.generate(request, { signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toContain(`http://127.0.0.1:${port}/v1/chat/completions`);
    expect((error as Error).message).not.toContain('secret');
  });

  it('accept a JSON answer from a server that ignores stream: true', async () => {
    server = await startLlmServer([openAIText('plain')]);
    const model = openAIChatModel({ baseUrl: server.url, model: 'm', stream: true });
    await expect(model.generate(request, { signal: new AbortController().signal })).resolves.toMatchObject({
      text: 'plain',
    });
  });

  it('let body fields remove stream_options for servers that reject it', async () => {
    server = await startLlmServer([{ sse: [{ choices: [{ delta: { content: 'hi' } }] }], done: true }]);
    const model = openAIChatModel({
      baseUrl: server.url,
      model: 'm',
      stream: true,
      body: { stream_options: undefined },
    });
    await expect(model.generate(request, { signal: new AbortController().signal })).resolves.toMatchObject({
      text: 'hi',
    });
    expect(server.requests[0].body).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
  });

  it('reject an answer without choices as a protocol error', async () => {
    server = await startLlmServer([{ json: { object: 'chat.completion' } }]);
    const model = openAIChatModel({ baseUrl: server.url, model: 'm' });
    await expect(model.generate(request, { signal: new AbortController().signal })).rejects.toMatchObject({
      code: 'PROTOCOL_ERROR',
    });
  });

  it('accept tool-call arguments sent as an object and fill in a missing call id', async () => {
    server = await startLlmServer([
      {
        json: {
          choices: [
            {
              message: {
                role: 'assistant',
                content: '',
                tool_calls: [{ type: 'function', function: { name: 'x__y', arguments: { a: 1 } } }],
              },
            },
          ],
        },
      },
    ]);
    const model = openAIChatModel({ baseUrl: server.url, model: 'm' });
    const response = await model.generate(request, { signal: new AbortController().signal });
    expect(response.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'x__y', arguments: '{"a":1}' },
    ]);
  });

  it('merge consecutive messages of one role for Anthropic and drop empty text', async () => {
    server = await startLlmServer([{ json: { content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn' } }]);
    const model = anthropicModel({ baseUrl: server.url, model: 'm' });
    await model.generate(
      {
        messages: [
          { type: 'user', text: 'a' },
          { type: 'user', text: 'b' },
          { type: 'assistant', text: '' },
          { type: 'user', text: 'c' },
        ],
        tools: [],
        toolChoice: 'auto',
      },
      { signal: new AbortController().signal },
    );
    expect(server.requests[0].body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
          { type: 'text', text: 'c' },
        ],
      },
    ]);
  });
});
