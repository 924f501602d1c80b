/**
 * The v2 MCP server SDK speaks web-standard `Request`/`Response`; the bridge listens with node:http. These two
 * functions translate between them (docs/design/transports.md#mcp-bridge-http).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

/** A `Request` for `req` whose signal aborts when the host goes away before the response is complete. */
export function toWebRequest(req: IncomingMessage, res: ServerResponse): Request {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  return new Request(new URL(req.url ?? '/', 'http://bridge.invalid'), {
    method,
    headers,
    body: hasBody ? (Readable.toWeb(req) as unknown as ReadableStream<Uint8Array>) : undefined,
    // Node's fetch needs this for a streamed request body.
    duplex: 'half',
    signal: gone.signal,
  } as RequestInit);
}

/** Writes `response` to `res`; an event stream is flushed as it comes. Settles when the response ends or the host leaves. */
export async function sendWebResponse(res: ServerResponse, response: Response): Promise<void> {
  const headers: Record<string, string | string[]> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  // Headers go out at once: an SSE response may carry its first event much later.
  res.flushHeaders();
  // A host that disconnects ends the pipeline with an error; the source stream is cancelled either way.
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>), res).catch(() => {});
}
