import type { IncomingHttpHeaders } from 'node:http';
import type { Type } from 'protobufjs';
import { UtcpError, UtcpTimeoutError, type ValidationIssue } from '../../core/errors.js';
import { abortError } from '../../core/deadline.js';
import type { TransportContext } from '../../core/transport.js';
import { destroyBody, headerValue, mediaType, readBodyCapped, utf8, type ResponseBody } from '../../http/http-body.js';
import { exchangeDefaults } from '../../http/http-dispatcher.js';
import { httpExchange, type StreamedHttpResponse } from '../../http/http-exchange.js';
import { GrpcError } from './grpc-error.js';
import { TO_OBJECT_OPTIONS, jsonToMessage, responseToJson } from './proto-json.js';
import { typeName } from './proto-schema.js';

/** The HTTP/1.1 wire protocols of the `grpc` transport (docs/design/transports.md#grpc-wire-protocols). */
export type WebProtocol = 'grpc-web' | 'connect';
export type ConnectCodec = 'json' | 'proto';

export interface WebCallOptions {
  ctx: TransportContext;
  protocol: WebProtocol;
  /** Connect only: JSON (default) or binary protobuf bodies. gRPC-Web is always binary. */
  codec: ConnectCodec;
  /** `http(s)://host:port/package.Service/Method` */
  url: string;
  /** The encoded request message. */
  request: Buffer;
  /** Needed for the Connect JSON codec (bytes ⇄ proto3 JSON). */
  requestType: Type;
  responseType: Type;
  /** Metadata and auth, already checked, as HTTP headers. */
  headers: Record<string, string>;
  /** Whole-call deadline in ms: sent as `grpc-timeout` / `connect-timeout-ms`; `signal` enforces it locally. */
  timeoutMs: number;
  signal: AbortSignal;
  /** Largest single response message accepted, in bytes. */
  maxMessageBytes: number;
  what: string;
  callerTimeoutMs?: number;
  remoteSource?: boolean;
}

/** gRPC status names by code (the same names grpc-js gives native calls). */
const STATUS_NAMES = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
] as const;
const UNKNOWN = 2;
const INTERNAL = 13;
/** Largest trailers frame or end-of-stream message read (they carry a status, not data). */
const MAX_TRAILER_BYTES = 64 * 1024;

/** HTTP status → gRPC code when the server sent no status of its own (the gRPC and Connect specs' table). */
function codeForHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return INTERNAL;
    case 401:
      return 16;
    case 403:
      return 7;
    case 404:
      return 12;
    case 429:
    case 502:
    case 503:
    case 504:
      return 14;
    default:
      return UNKNOWN;
  }
}

/** A Connect error code ("not_found", "canceled") → its gRPC code. */
function codeForConnect(code: unknown): number | undefined {
  if (typeof code !== 'string') return undefined;
  const name = code === 'canceled' ? 'CANCELLED' : code.toUpperCase();
  const index = STATUS_NAMES.indexOf(name as (typeof STATUS_NAMES)[number]);
  return index > 0 ? index : undefined;
}

/** A non-OK status → the typed error: DEADLINE_EXCEEDED is a timeout, as for native gRPC. */
function statusError(options: WebCallOptions, code: number, message: string): UtcpError {
  if (options.signal.aborted) return abortError(options.signal, options.what, options.callerTimeoutMs);
  if (code === 4) return new UtcpTimeoutError(options.what, options.timeoutMs);
  return new GrpcError(options.what, code, STATUS_NAMES[code] ?? 'UNKNOWN', message);
}

function protocolError(options: WebCallOptions, message: string): UtcpError {
  return new UtcpError('PROTOCOL_ERROR', `${options.what}: ${message}`);
}

/** `grpc-message` is percent-encoded (gRPC over HTTP/2 spec); a bad escape leaves the text as sent. */
function grpcMessage(value: string | undefined): string {
  if (!value) return '';
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** A length-prefixed frame: flags byte, 4-byte big-endian length, payload (gRPC-Web and Connect envelopes). */
function frame(flags: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.byteLength);
  out[0] = flags;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
}

interface Frame {
  flags: number;
  data: Buffer;
}

/**
 * Reads length-prefixed frames from a body as they complete. A data frame above `maxBytes` (or a control frame,
 * `controlFlag` set, above MAX_TRAILER_BYTES) fails before its payload is buffered; a cut frame is a protocol error.
 */
async function* readFrames(
  body: ResponseBody,
  maxBytes: number,
  controlFlag: number,
  options: WebCallOptions,
): AsyncGenerator<Frame, void, undefined> {
  let pending: Buffer[] = [];
  let have = 0;
  let need = 5;
  for await (const chunk of body) {
    pending.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    have += chunk.byteLength;
    if (have < need) continue;
    let all = Buffer.concat(pending, have);
    for (;;) {
      if (all.length < 5) break;
      const flags = all[0]!;
      const length = all.readUInt32BE(1);
      const cap = flags & controlFlag ? MAX_TRAILER_BYTES : maxBytes;
      if (length > cap) {
        throw new UtcpError(
          'RESPONSE_TOO_LARGE',
          `${options.what}: a response message of ${length} bytes exceeds the ${cap}-byte limit`,
        );
      }
      if (all.length < 5 + length) break;
      yield { flags, data: all.subarray(5, 5 + length) };
      all = all.subarray(5 + length);
    }
    pending = all.length > 0 ? [all] : [];
    have = all.length;
    need = all.length < 5 ? 5 : 5 + all.readUInt32BE(1);
  }
  if (have > 0) throw protocolError(options, 'the response ended inside a message frame');
}

/** Sends the request through the one HTTP exchange (URL policy, dial guard, no redirects) with its body unread. */
function send(
  options: WebCallOptions,
  headers: Record<string, string>,
  body: Uint8Array,
): Promise<StreamedHttpResponse> {
  const defaults = exchangeDefaults(options.ctx);
  return httpExchange(
    { url: options.url, method: 'POST', headers: { ...options.headers, ...headers }, body },
    {
      dispatcher: defaults.dispatcher,
      logger: defaults.logger,
      mode: 'stream',
      signal: options.signal,
      callerTimeoutMs: options.callerTimeoutMs,
      what: options.what,
      context: 'tool invocation',
      redirect: 'refuse',
      remoteSource: options.remoteSource,
    },
  );
}

/** The request message as proto3 JSON text (the same mapping as native results, docs/design/transports.md#grpc-json). */
function requestJson(options: WebCallOptions): string {
  const type = options.requestType;
  return JSON.stringify(
    responseToJson(type, type.toObject(type.decode(options.request), TO_OBJECT_OPTIONS) as Record<string, unknown>),
  );
}

/** A Connect JSON response message → the binary form the transport decodes. */
function responseFromJson(options: WebCallOptions, bytes: Uint8Array): Buffer {
  const type = options.responseType;
  let value: unknown;
  try {
    value = JSON.parse(utf8(bytes));
  } catch {
    throw protocolError(options, `the response is not JSON (expected a ${typeName(type)} message)`);
  }
  const found: ValidationIssue[] = [];
  const object = jsonToMessage(type, value, '', found);
  // A field the proto file does not know (a newer server) is skipped, as binary protobuf skips unknown fields.
  const issues = found.filter((issue) => !issue.message.startsWith('is not a field of message'));
  if (issues.length > 0) {
    throw protocolError(
      options,
      `the response is not a valid ${typeName(type)} message: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    );
  }
  try {
    const encoded = type.encode(type.fromObject(object)).finish();
    return Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength);
  } catch (cause) {
    throw new UtcpError('PROTOCOL_ERROR', `${options.what}: the response is not a valid ${typeName(type)} message`, {
      cause,
    });
  }
}

/**
 * Reads the body (the exchange ends it when the call's signal aborts: caller, close or deadline); a failure once the
 * signal aborted is the typed abort or timeout error, and the body is always destroyed when reading stops.
 */
async function* guarded<T>(
  response: StreamedHttpResponse,
  options: WebCallOptions,
  read: (body: ResponseBody) => AsyncGenerator<T, void, undefined>,
): AsyncGenerator<T, void, undefined> {
  try {
    yield* read(response.body);
  } catch (error) {
    if (options.signal.aborted) throw abortError(options.signal, options.what, options.callerTimeoutMs);
    throw error;
  } finally {
    destroyBody(response.body);
  }
}

function header(response: StreamedHttpResponse, name: string): string | undefined {
  return headerValue(response.headers as IncomingHttpHeaders, name);
}

// ------------------------------------------------------------------ gRPC-Web

/** Parses a trailers frame: HTTP/1-style `name: value` lines. */
function parseTrailers(data: Buffer): Map<string, string> {
  const trailers = new Map<string, string>();
  for (const line of data.toString('latin1').split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) trailers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return trailers;
}

/** Status from response headers (a trailers-only answer) or a trailers frame. */
function grpcStatus(options: WebCallOptions, get: (name: string) => string | undefined): UtcpError | 'ok' | undefined {
  const raw = get('grpc-status');
  if (raw === undefined) return undefined;
  const code = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : UNKNOWN;
  if (code === 0) return 'ok';
  return statusError(options, code <= 16 ? code : UNKNOWN, grpcMessage(get('grpc-message')));
}

async function* grpcWebMessages(options: WebCallOptions): AsyncGenerator<Buffer, void, undefined> {
  const response = await send(
    options,
    {
      'content-type': 'application/grpc-web+proto',
      accept: 'application/grpc-web+proto',
      'x-grpc-web': '1',
      'grpc-timeout': `${Math.max(1, Math.ceil(options.timeoutMs))}m`,
    },
    frame(0, options.request),
  );
  const get = (name: string) => header(response, name);
  yield* guarded(response, options, async function* (body) {
    const early = grpcStatus(options, get);
    if (response.status !== 200 || early !== undefined) {
      if (early instanceof UtcpError) throw early;
      if (response.status !== 200) {
        throw statusError(options, codeForHttpStatus(response.status), `HTTP status ${response.status}`);
      }
      return; // trailers-only OK: no messages
    }
    if (!mediaType(get('content-type')).startsWith('application/grpc-web')) {
      throw protocolError(options, `unexpected content type ${JSON.stringify(get('content-type') ?? '')}`);
    }
    for await (const { flags, data } of readFrames(body, options.maxMessageBytes, 0x80, options)) {
      if (flags & 0x80) {
        const trailers = parseTrailers(data);
        const status = grpcStatus(options, (name) => trailers.get(name));
        if (status instanceof UtcpError) throw status;
        if (status === 'ok') return;
        throw protocolError(options, 'the trailers carry no grpc-status');
      }
      if (flags & 0x01) throw protocolError(options, 'the server sent a compressed message (none was offered)');
      yield data;
    }
    throw statusError(options, INTERNAL, 'the response ended without a status (no trailers)');
  });
}

// ------------------------------------------------------------------ Connect

function connectHeaders(options: WebCallOptions, contentType: string): Record<string, string> {
  return {
    'content-type': contentType,
    'connect-protocol-version': '1',
    'connect-timeout-ms': String(Math.max(1, Math.ceil(options.timeoutMs))),
  };
}

/** A Connect error body `{code, message}` (or an HTTP status alone) → the typed error. */
function connectError(options: WebCallOptions, httpStatus: number, bytes: Uint8Array | undefined): UtcpError {
  let parsed: { code?: unknown; message?: unknown } | undefined;
  try {
    parsed = bytes && bytes.byteLength > 0 ? JSON.parse(utf8(bytes)) : undefined;
  } catch {
    parsed = undefined;
  }
  const code = codeForConnect(parsed?.code) ?? codeForHttpStatus(httpStatus);
  const message = typeof parsed?.message === 'string' ? parsed.message : `HTTP status ${httpStatus}`;
  return statusError(options, code, message);
}

async function* connectUnary(options: WebCallOptions): AsyncGenerator<Buffer, void, undefined> {
  const json = options.codec === 'json';
  const response = await send(
    options,
    connectHeaders(options, json ? 'application/json' : 'application/proto'),
    json ? Buffer.from(requestJson(options)) : options.request,
  );
  yield* guarded(response, options, async function* (body) {
    if (response.status !== 200) {
      const bytes = await readBodyCapped(body, response.headers, MAX_TRAILER_BYTES, options.what).catch(
        () => undefined,
      );
      throw connectError(options, response.status, bytes);
    }
    const encoding = header(response, 'content-encoding')?.trim().toLowerCase();
    if (encoding && encoding !== 'identity') {
      throw protocolError(options, `the server sent a ${encoding}-compressed message (none was offered)`);
    }
    const bytes = await readBodyCapped(body, response.headers, options.maxMessageBytes, options.what);
    yield json ? responseFromJson(options, bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  });
}

async function* connectStream(options: WebCallOptions): AsyncGenerator<Buffer, void, undefined> {
  const json = options.codec === 'json';
  const request = json ? Buffer.from(requestJson(options)) : options.request;
  const response = await send(
    options,
    connectHeaders(options, json ? 'application/connect+json' : 'application/connect+proto'),
    frame(0, request),
  );
  yield* guarded(response, options, async function* (body) {
    if (response.status !== 200) {
      const bytes = await readBodyCapped(body, response.headers, MAX_TRAILER_BYTES, options.what).catch(
        () => undefined,
      );
      throw connectError(options, response.status, bytes);
    }
    for await (const { flags, data } of readFrames(body, options.maxMessageBytes, 0x02, options)) {
      if (flags & 0x02) {
        let end: { error?: { code?: unknown; message?: unknown } } | undefined;
        try {
          end = JSON.parse(utf8(data));
        } catch {
          throw protocolError(options, 'the end-of-stream message is not JSON');
        }
        if (end?.error) throw connectError(options, 500, Buffer.from(JSON.stringify(end.error)));
        return;
      }
      if (flags & 0x01) throw protocolError(options, 'the server sent a compressed message (none was offered)');
      yield json ? responseFromJson(options, data) : data;
    }
    throw statusError(options, INTERNAL, 'the stream ended without its end-of-stream message');
  });
}

// ------------------------------------------------------------------ entry points

/** One unary call over gRPC-Web or Connect; resolves with the binary response message. */
export async function webUnaryCall(options: WebCallOptions): Promise<Buffer> {
  if (options.signal.aborted) throw abortError(options.signal, options.what, options.callerTimeoutMs);
  const messages = options.protocol === 'connect' ? connectUnary(options) : grpcWebMessages(options);
  let result: Buffer | undefined;
  for await (const message of messages) {
    if (result !== undefined) throw protocolError(options, 'a unary call answered with more than one message');
    result = message;
  }
  if (result === undefined) throw statusError(options, UNKNOWN, 'the unary call answered with no message');
  return result;
}

/**
 * One server-streaming call; yields each binary message as it arrives. A non-OK status is thrown after the items
 * before it; returning early or aborting ends the request.
 */
export async function* webServerStreamCall(options: WebCallOptions): AsyncGenerator<Buffer, void, undefined> {
  if (options.signal.aborted) throw abortError(options.signal, options.what, options.callerTimeoutMs);
  yield* options.protocol === 'connect' ? connectStream(options) : grpcWebMessages(options);
}
