/** A local HTTP server speaking the OpenAI and Anthropic wire formats with scripted replies, recording what it received. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

export type ScriptedReply =
  | { json: unknown; status?: number; headers?: Record<string, string> }
  | { sse: unknown[]; eventNames?: boolean; done?: boolean; headers?: Record<string, string> }
  | { text: string; status: number; headers?: Record<string, string>; contentType?: string }
  /** Write these bytes of a 200 answer, then reset the connection. */
  | { resetAfter: string }
  /** Answer with whatever the function returns for this request (e.g. a refusal of a malformed request). */
  | { check: (req: RecordedRequest) => ScriptedReply }
  /** Accept the request and never answer (until the client gives up). */
  | { hold: true };

export interface LlmServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  requests: RecordedRequest[];
  /** Scripted replies not used yet. */
  remaining(): number;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  close(): Promise<void>;
}

function writeSse(res: ServerResponse, reply: Extract<ScriptedReply, { sse: unknown[] }>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...(reply.headers ?? {}) });
  for (const item of reply.sse) {
    const data = typeof item === 'string' ? item : JSON.stringify(item);
    const name =
      reply.eventNames && typeof item === 'object' && item !== null
        ? `event: ${(item as { type: string }).type}\n`
        : '';
    res.write(`${name}data: ${data}\n\n`);
  }
  if (reply.done) res.write('data: [DONE]\n\n');
  res.end();
}

export async function startLlmServer(replies: ScriptedReply[]): Promise<LlmServer> {
  const requests: RecordedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  let next = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // kept as text
      }
      const recorded = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      requests.push(recorded);
      for (const w of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
      let reply = replies[next++];
      while (reply && 'check' in reply) reply = reply.check(recorded);
      if (!reply) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `unexpected request #${next}` } }));
      } else if ('hold' in reply) {
        // never answers
      } else if ('resetAfter' in reply && reply.resetAfter === '') {
        res.socket?.resetAndDestroy();
      } else if ('resetAfter' in reply) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write(reply.resetAfter, () => res.socket?.resetAndDestroy());
      } else if ('sse' in reply) {
        writeSse(res, reply);
      } else if ('json' in reply) {
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...(reply.headers ?? {}) });
        res.end(JSON.stringify(reply.json));
      } else if ('text' in reply) {
        res.writeHead(reply.status, { 'content-type': reply.contentType ?? 'text/plain', ...(reply.headers ?? {}) });
        res.end(reply.text);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    remaining: () => replies.length - next,
    waitForRequests: (count) =>
      requests.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------- OpenAI replies

export function openAIText(text: string, usage = { prompt_tokens: 10, completion_tokens: 5 }): ScriptedReply {
  return {
    json: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

export function openAIToolCalls(
  calls: Array<{ id: string; name: string; arguments: string }>,
  content: string | null = null,
): ScriptedReply {
  return {
    json: {
      id: 'chatcmpl-2',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 },
    },
  };
}

// ---------------------------------------------------------------- Anthropic replies

export function anthropicText(text: string): ScriptedReply {
  return {
    json: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, output_tokens: 4 },
    },
  };
}

export function anthropicToolUse(
  calls: Array<{ id: string; name: string; input: unknown }>,
  text?: string,
): ScriptedReply {
  return {
    json: {
      id: 'msg_2',
      type: 'message',
      role: 'assistant',
      content: [
        ...(text ? [{ type: 'text', text }] : []),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 30, output_tokens: 9 },
    },
  };
}
