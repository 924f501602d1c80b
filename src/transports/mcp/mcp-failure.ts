/**
 * Words for MCP failures, shared by requests (mcp-session.ts) and connection opening (mcp-connection.ts):
 * the HTTP status and the server's own message of an SDK error, and bounded messages
 * (docs/design/transports.md#mcp-errors).
 */
import type { McpSdk } from './load-mcp-sdk.js';

export interface HttpFailure {
  status: number;
  /** The server's own words: the JSON-RPC error message of the body, else a short plain-text body. */
  message: string | undefined;
  rpcCode: number | undefined;
}

/** The HTTP status and the server's message of an SDK HTTP error (streamable HTTP or legacy SSE). */
export function httpFailureOf(error: unknown, sdk: McpSdk): HttpFailure | undefined {
  if (error instanceof sdk.SdkHttpError) {
    const data = error.data as { status?: unknown; text?: unknown } | undefined;
    const status = typeof data?.status === 'number' ? data.status : undefined;
    if (status === undefined) return undefined;
    return { status, ...serverWords(typeof data?.text === 'string' ? data.text : '') };
  }
  if (error instanceof sdk.SseError && typeof error.code === 'number' && error.code >= 100) {
    return { status: error.code, message: undefined, rpcCode: undefined };
  }
  const legacy = /\(HTTP (\d{3})\)|Non-200 status code \((\d{3})\)/.exec(messageWithCode(error));
  if (legacy) return { status: Number(legacy[1] ?? legacy[2]), message: undefined, rpcCode: undefined };
  return undefined;
}

/** Reads a JSON-RPC error out of a response body; a short non-JSON body is quoted as it is. */
function serverWords(body: string): { message: string | undefined; rpcCode: number | undefined } {
  const text = body.trim();
  if (text === '') return { message: undefined, rpcCode: undefined };
  try {
    const parsed = JSON.parse(text) as { error?: { message?: unknown; code?: unknown } } | null;
    const rpc = parsed && typeof parsed === 'object' ? parsed.error : undefined;
    if (rpc && typeof rpc.message === 'string')
      return { message: bounded(rpc.message, 300), rpcCode: typeof rpc.code === 'number' ? rpc.code : undefined };
  } catch {
    // not JSON
  }
  return {
    message: /^[\x20-\x7e\s]+$/.test(text) && text.length <= 300 ? text.replace(/\s+/g, ' ') : undefined,
    rpcCode: undefined,
  };
}

export function describeHttpFailure(http: HttpFailure): string {
  const rpc = http.rpcCode !== undefined ? `, JSON-RPC error ${http.rpcCode}` : '';
  return `HTTP ${http.status}${http.message ? `: ${http.message}` : ''}${rpc ? ` (${rpc.slice(2)})` : ''}`;
}

/** The message, plus the system error code underneath (`fetch failed (ECONNREFUSED)`). */
export function messageWithCode(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let code: string | undefined;
  let inner: unknown = (error as { cause?: unknown }).cause;
  for (let depth = 0; depth < 4 && inner && code === undefined; depth++) {
    const candidate = (inner as { code?: unknown }).code;
    if (typeof candidate === 'string' && /^E[A-Z_]+$/.test(candidate)) code = candidate;
    inner = (inner as { cause?: unknown }).cause;
  }
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}

export function bounded(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
