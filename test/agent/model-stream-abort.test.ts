/**
 * A model answer that stops half-way through its stream: the run's signal and the per-try deadline (`timeoutMs`,
 * body included) both end it with the typed error, and the connection is released. Real local server that sends
 * the first OpenAI stream chunk and then nothing.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openAIChatModel } from '../../src/agent/index.js';

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

/** Answers with SSE headers and one text chunk, then holds the stream open. */
async function stalledStream(): Promise<{ url: string; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(
      `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hel' } }] })}\n\n`,
    );
    held.push(res);
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  close = () =>
    new Promise<void>((resolve) => {
      for (const r of held) r.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, sockets };
}

const request = { messages: [{ type: 'user' as const, text: 'hi' }], tools: [], toolChoice: 'auto' as const };

/** Resolves when every socket still open has closed (a closed socket has already left the set). */
function socketsClosed(sockets: Set<Socket>): Promise<unknown> {
  return Promise.all([...sockets].map((s) => new Promise((resolve) => s.once('close', resolve))));
}

describe('a model stream that stalls', () => {
  it('ends with UtcpAbortError when the run aborts after the first text, and the socket closes', async () => {
    const { url, sockets } = await stalledStream();
    const model = openAIChatModel({ baseUrl: url, model: 'm', stream: true, maxRetries: 2 });
    const controller = new AbortController();
    const deltas: string[] = [];
    const pending = model.generate(request, {
      signal: controller.signal,
      onTextDelta: (t) => {
        deltas.push(t);
        controller.abort();
      },
    });
    await expect(pending).rejects.toMatchObject({ code: 'ABORTED' });
    expect(deltas).toEqual(['Hel']);
    await socketsClosed(sockets);
    await model.close?.();
  });

  it('ends with UtcpTimeoutError when the per-try deadline passes inside the body (not retried: output started)', async () => {
    const { url, sockets } = await stalledStream();
    const model = openAIChatModel({ baseUrl: url, model: 'm', stream: true, timeoutMs: 300, maxRetries: 2 });
    const retries: unknown[] = [];
    const error = await model
      .generate(request, { signal: new AbortController().signal, onRetry: (r) => retries.push(r) })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TIMEOUT' });
    expect((error as Error).message).toContain('openai request');
    expect(retries).toEqual([]);
    await socketsClosed(sockets);
    await model.close?.();
  });
});
