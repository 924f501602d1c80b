/**
 * A tiny task API for the http-client example (node:http on 127.0.0.1, port 0). Every route wants
 * `X-Api-Key: <apiKey>`. It remembers a one-line summary of each request so the example can show
 * what actually went over the wire.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Task {
  id: number;
  title: string;
  status: 'open' | 'done';
}

export interface TaskApi {
  /** e.g. `http://127.0.0.1:41234` */
  url: string;
  /** One line per request received: method, path with query, and the interesting headers and body. */
  requests: string[];
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += chunk;
  return text;
}

/** Writes three Server-Sent Events describing a task's progress, then ends the stream. */
function streamProgress(res: ServerResponse, task: Task): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const percent of [25, 75, 100]) {
    res.write(`event: progress\ndata: ${JSON.stringify({ task: task.id, percent })}\n\n`);
  }
  res.end();
}

export async function startTaskApi(apiKey: string): Promise<TaskApi> {
  const tasks: Task[] = [
    { id: 1, title: 'Write the README', status: 'done' },
    { id: 2, title: 'Ship version 1.0', status: 'open' },
    { id: 3, title: 'Answer the issues', status: 'open' },
  ];
  const requests: string[] = [];

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const body = req.method === 'POST' ? await readBody(req) : '';
    const idempotencyKey = req.headers['idempotency-key'];
    requests.push(
      `${req.method} ${url.pathname}${url.search}` +
        (idempotencyKey ? `  Idempotency-Key: ${idempotencyKey}` : '') +
        (body ? `  body: ${body}` : ''),
    );

    if (req.headers['x-api-key'] !== apiKey) return send(res, 401, { error: 'missing or wrong X-Api-Key' });

    if (url.pathname === '/tasks' && req.method === 'GET') {
      const status = url.searchParams.get('status');
      const limit = Number(url.searchParams.get('limit') ?? tasks.length);
      return send(res, 200, tasks.filter((t) => !status || t.status === status).slice(0, limit));
    }
    if (url.pathname === '/tasks' && req.method === 'POST') {
      const input = JSON.parse(body) as { title?: string };
      if (!input.title) return send(res, 400, { error: 'title is required' });
      const task: Task = { id: tasks.length + 1, title: input.title, status: 'open' };
      tasks.push(task);
      return send(res, 201, { ...task, idempotency_key: idempotencyKey ?? null });
    }
    const match = /^\/tasks\/(\d+)(\/events)?$/.exec(url.pathname);
    const task = match ? tasks.find((t) => t.id === Number(match[1])) : undefined;
    if (match && !task) return send(res, 404, { error: `no task with id ${match[1]}` });
    if (task && match?.[2]) return streamProgress(res, task);
    if (task) return send(res, 200, task);
    send(res, 404, { error: 'not found' });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
