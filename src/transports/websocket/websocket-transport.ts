/**
 * The `websocket` transport (docs/design/transports.md#websocket): pooled persistent connections per
 * (manual, url, protocol), discovery by message, message templates, request-id correlation,
 * `first_message` / `until_close` responses and streaming until `stream_end`, `complete` or close.
 */
import { createHash, randomUUID } from 'node:crypto';
import { HttpStatusError, ToolExecutionError, TransportError } from '../../core/errors.js';
import { argToText } from '../../core/stringify.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { WebSocketCallTemplate } from './template.js';
import { assertUrlAllowed, redactUrl } from '../../core/url-policy.js';
import { invalidateAuth } from '../../http/auth.js';
import { isManualDocument, discoveryDisabled, socketDiscoveryResult } from '../shared/socket-discovery.js';
import {
  buildWebSocketMessage,
  discoveryMessageText,
  templateMentions,
  wireToolName,
} from '../shared/socket-payload.js';
import { AbortScopes } from '../../net/socket-scopes.js';
import { streamCutOff } from '../shared/stream-end.js';
import { createDeadline } from '../../core/deadline.js';
import { AsyncQueue } from '../shared/async-queue.js';
import { decodeFrame, type RawFrame } from './decode-frame.js';
import { handshakeRequest } from './handshake-request.js';
import { loadWs, type WebSocketClass } from './load-ws.js';
import { openWebSocket } from './open-websocket.js';
import type { CloseInfo, WsConnection } from './ws-connection.js';
import { WsPool } from './ws-pool.js';
import { toolPathUrl, wsSettings, type WsSettings } from './ws-settings.js';

/** A connection held by one discovery or call. */
interface Lease {
  connection: WsConnection;
  /** Pooled leases give the slot back; a lease that ended mid-exchange drops its socket (late frames would reach the next call). */
  release(clean: boolean): void;
}

interface LeaseRequest {
  template: WebSocketCallTemplate;
  settings: WsSettings;
  manualName: string;
  url: string;
  extraHeaders: Record<string, string>;
  dedicated: boolean;
  exclusive: boolean;
  signal: AbortSignal;
  callerTimeoutMs?: number;
  what: string;
  /** The tool comes from a remote-sourced manual (dial guard on). */
  remoteSource?: boolean;
}

type Purpose = 'first' | 'all' | 'stream';

/** A frame of the connection, or its end. */
type QueueItem = ({ kind: 'frame' } & RawFrame) | ({ kind: 'closed' } & CloseInfo);

/**
 * Subscribes one discovery or call to the connection's frames through the shared queue. With `flow`, the
 * socket is paused while frames wait unread (only when no other call shares it). `stop()` unsubscribes.
 */
function subscribeFrames(connection: WsConnection, what: string, maxBufferedBytes: number, flow: boolean) {
  const queue = new AsyncQueue<QueueItem>({
    what,
    maxBufferedBytes,
    sizeOf: (item) => (item.kind === 'frame' ? item.data.length : 0),
    flow: flow ? connection : undefined,
  });
  const unsubscribe = connection.subscribe({
    frame: (frame) => queue.push({ kind: 'frame', ...frame }),
    closed: (info) => {
      queue.push({ kind: 'closed', ...info });
      queue.end();
    },
  });
  return {
    /** The next frame or the close. @throws the typed abort/timeout error, or the queue's limit error. */
    async next(signal: AbortSignal, callerTimeoutMs: number | undefined): Promise<QueueItem> {
      const result = await queue.take(signal, callerTimeoutMs);
      // Unreachable: the close is always queued before the end.
      if (result.done) throw new TransportError(`${what}: the connection ended`);
      return result.value;
    },
    stop(): void {
      unsubscribe();
      void queue.return();
    },
  };
}

function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** Removes `header_fields` arguments from the message and returns them as header values (null/absent omitted). */
function splitHeaderFields(
  args: JsonObject,
  fields: string[],
): { messageArgs: JsonObject; headerValues: Record<string, string> } {
  const messageArgs: JsonObject = { ...args };
  const headerValues: Record<string, string> = {};
  for (const name of fields) {
    if (!(name in messageArgs)) continue;
    const text = argToText(messageArgs[name]);
    delete messageArgs[name];
    if (text !== undefined) headerValues[name] = text;
  }
  return { messageArgs, headerValues };
}

function toolErrorOf(envelope: Record<string, unknown>, what: string): ToolExecutionError {
  const error = envelope.error;
  const message =
    typeof error === 'string'
      ? error
      : typeof (error as { message?: unknown } | null)?.message === 'string'
        ? (error as { message: string }).message
        : JSON.stringify(error ?? null);
  return new ToolExecutionError(`${what}: the tool reported an error: ${message.slice(0, 500)}`, error);
}

export class WebSocketTransport implements Transport<WebSocketCallTemplate> {
  readonly type = 'websocket';
  readonly #ctx: TransportContext;
  readonly #scopes = new AbortScopes('websocket');
  readonly #pool = new WsPool();
  #ws: Promise<WebSocketClass> | undefined;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: WebSocketCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    this.#scopes.assertOpen();
    const settings = wsSettings(template);
    assertUrlAllowed(settings.url, 'manual discovery', 'ws');
    const message = discoveryMessageText(template.discovery_message);
    if (message === undefined) return discoveryDisabled('websocket');
    const what = `WebSocket discovery from ${redactUrl(settings.url)}`;
    const scope = this.#scopes.callDeadline(options.manualName, options.signal, undefined, what);
    try {
      return await this.#discover(template, settings, message, scope.signal, options, what);
    } finally {
      scope.dispose();
    }
  }

  async #discover(
    template: WebSocketCallTemplate,
    settings: WsSettings,
    message: string,
    signal: AbortSignal,
    options: CallOptions,
    what: string,
  ): Promise<DiscoveryResult> {
    const lease = await this.#lease({
      template,
      settings,
      manualName: options.manualName,
      url: settings.url,
      extraHeaders: {},
      dedicated: false,
      exclusive: true,
      signal,
      callerTimeoutMs: options.timeoutMs,
      what,
    });
    const frames = subscribeFrames(lease.connection, what, this.#ctx.limits.max_response_bytes, false);
    const deadline = createDeadline(signal, settings.timeoutMs, what);
    let clean = false;
    try {
      await lease.connection.send(message);
      for (;;) {
        const item = await frames.next(deadline.signal, options.timeoutMs);
        if (item.kind === 'closed')
          throw item.error ?? new TransportError(`${what}: connection closed before the manual arrived`);
        if (item.isBinary) continue;
        const { envelope } = decodeFrame(item, 'json');
        if (!isManualDocument(envelope)) continue; // other frames (greetings, notifications) are ignored
        clean = true;
        return socketDiscoveryResult(envelope, { rawTemplate: options.rawTemplate, sourceHost: settings.url, what });
      }
    } finally {
      deadline.dispose();
      frames.stop();
      lease.release(clean);
    }
  }

  async callTool(
    tool: Tool,
    args: JsonObject,
    template: WebSocketCallTemplate,
    options: CallOptions,
  ): Promise<unknown> {
    if ((template.response_mode ?? 'first_message') === 'until_close') {
      const items: unknown[] = [];
      for await (const item of this.#exchange(tool, args, template, options, 'all')) items.push(item);
      return items;
    }
    for await (const item of this.#exchange(tool, args, template, options, 'first')) return item;
    throw new TransportError(`WebSocket call ${tool.name}: no response`); // unreachable: 'first' yields or throws
  }

  callToolStream(
    tool: Tool,
    args: JsonObject,
    template: WebSocketCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown> {
    return this.#exchange(tool, args, template, options, 'stream');
  }

  async deregisterManual(_template: WebSocketCallTemplate, options: { manualName: string }): Promise<void> {
    this.#scopes.abortManual(options.manualName);
    await this.#pool.closeManual(options.manualName);
  }

  async close(): Promise<void> {
    this.#scopes.closeAll();
    await this.#pool.closeAll();
  }

  /**
   * Sends the tool message and yields decoded frames. `first` yields one frame; `all` and `stream`
   * continue until `stream_end`/`complete` or the server closes. `timeout` applies between frames.
   */
  async *#exchange(
    tool: Tool,
    args: JsonObject,
    template: WebSocketCallTemplate,
    options: CallOptions,
    purpose: Purpose,
  ): AsyncGenerator<unknown> {
    this.#scopes.assertOpen();
    const settings = wsSettings(template);
    assertUrlAllowed(settings.url, 'tool invocation', 'ws');
    const what = `WebSocket call ${tool.name} to ${redactUrl(settings.url)}`;
    const { messageArgs, headerValues } = splitHeaderFields(args, settings.headerFields);
    let requestId: string | undefined;
    if (templateMentions(settings.message, 'request_id')) {
      if (messageArgs.request_id === undefined || messageArgs.request_id === null)
        messageArgs.request_id = randomUUID();
      requestId = argToText(messageArgs.request_id);
    }
    const text = buildWebSocketMessage(settings.message, messageArgs);
    const perTool = settings.toolRouting === 'path_per_tool';
    const url = perTool ? toolPathUrl(settings.url, wireToolName(tool, options.manualName, 'bare')) : settings.url;
    const scope = this.#scopes.callDeadline(options.manualName, options.signal, undefined, what);
    try {
      yield* this.#converse(
        settings,
        url,
        text,
        requestId,
        headerValues,
        template,
        options,
        purpose,
        scope.signal,
        what,
      );
    } finally {
      scope.dispose();
    }
  }

  async *#converse(
    settings: WsSettings,
    url: string,
    text: string,
    requestId: string | undefined,
    headerValues: Record<string, string>,
    template: WebSocketCallTemplate,
    options: CallOptions,
    purpose: Purpose,
    signal: AbortSignal,
    what: string,
  ): AsyncGenerator<unknown> {
    const lease = await this.#lease({
      template,
      settings,
      manualName: options.manualName,
      url,
      extraHeaders: headerValues,
      dedicated: perToolOrHeaders(settings, headerValues),
      exclusive: requestId === undefined,
      signal,
      callerTimeoutMs: options.timeoutMs,
      what,
      remoteSource: options.remoteSource,
    });
    // Flow control only when no other call shares the socket.
    const maxTotal = this.#ctx.limits.max_response_bytes;
    const frames = subscribeFrames(lease.connection, what, maxTotal, requestId === undefined);
    const idle = createDeadline(signal, settings.timeoutMs, what);
    let total = 0;
    let clean = false;
    try {
      await lease.connection.send(text);
      for (;;) {
        const item = await frames.next(idle.signal, options.timeoutMs);
        if (item.kind === 'closed') {
          if (item.error) throw item.error;
          if (purpose === 'first')
            throw new TransportError(`${what}: connection closed before a response (code ${item.code})`);
          // Only a close handshake with 1000 (or no code) ends a stream; anything else cut it off
          // (docs/design/transports.md#cut-off-streams).
          if (!isCleanClose(item.code)) throw cutOff(what, item.code);
          clean = true;
          return;
        }
        const frame = decodeFrame(item, settings.responseFormat);
        if (requestId !== undefined && argToText(frame.envelope?.request_id) !== requestId) continue;
        idle.reset();
        const type = frame.envelope?.type;
        if (type === 'tool_error') {
          clean = true;
          throw toolErrorOf(frame.envelope!, what);
        }
        if ((type === 'stream_end' || type === 'complete') && purpose !== 'first') {
          clean = true;
          return;
        }
        if (purpose === 'all') {
          total += item.data.length;
          if (total > maxTotal)
            throw new TransportError(`${what}: response exceeds the ${maxTotal}-byte limit`, {
              code: 'RESPONSE_TOO_LARGE',
            });
        }
        const value = type === 'tool_response' ? frame.envelope!.result : frame.value;
        if (purpose === 'first') {
          clean = true;
          yield value;
          return;
        }
        yield value;
      }
    } finally {
      idle.dispose();
      frames.stop();
      lease.release(clean);
    }
  }

  async #lease(request: LeaseRequest): Promise<Lease> {
    const { settings, template } = request;
    const open = (signal: AbortSignal, pooled: boolean) => async (): Promise<WsConnection> => {
      const WebSocket = await this.#loadWs();
      const handshake = await handshakeRequest(
        request.url,
        settings.headers,
        template.auth,
        request.extraHeaders,
        this.#ctx,
        signal,
        request.remoteSource,
      );
      return openWebSocket(WebSocket, {
        request: handshake,
        protocol: settings.protocol,
        maxPayloadBytes: this.#ctx.limits.max_stream_item_bytes,
        keepAlive: pooled && settings.keepAlive,
        signal,
        timeoutMs: settings.timeoutMs,
        callerTimeoutMs: pooled ? undefined : request.callerTimeoutMs,
        remoteSource: request.remoteSource,
        lookup: this.#ctx.lookup,
        what: request.what,
        logger: this.#ctx.logger,
      }).catch((error: unknown) => {
        // A rejected upgrade may mean an expired OAuth2 token: the next attempt fetches a fresh one.
        if (error instanceof HttpStatusError && error.status === 401) invalidateAuth(template.auth, this.#ctx);
        throw error;
      });
    };
    if (request.dedicated) {
      const connection = await open(request.signal, false)();
      this.#pool.trackDedicated(connection);
      return { connection, release: () => void connection.close() };
    }
    const key = fingerprint([
      request.manualName,
      request.url,
      settings.protocol ?? null,
      settings.headers,
      template.auth ?? null,
      settings.keepAlive,
    ]);
    const entry = this.#pool.entry(key, request.manualName);
    const release = await entry.gate.acquire(request.exclusive, request.signal, request.what, request.callerTimeoutMs);
    try {
      // The shared connection must not die with the first caller's signal: open it under the manual's scope only.
      const connection = await this.#pool.connection(
        entry,
        open(this.#scopes.manualSignal(request.manualName), true),
        request.signal,
        request.what,
        request.callerTimeoutMs,
      );
      return {
        connection,
        release: (clean) => {
          if (!clean && request.exclusive) connection.terminate();
          release();
        },
      };
    } catch (error) {
      release();
      throw error;
    }
  }

  #loadWs(): Promise<WebSocketClass> {
    this.#ws ??= loadWs();
    this.#ws.catch(() => (this.#ws = undefined));
    return this.#ws;
  }
}

/** Close codes that end a stream cleanly: 1000 (normal closure) and 1005 (a close frame without a code). */
function isCleanClose(code: number): boolean {
  return code === 1000 || code === 1005;
}

/** The error of a stream cut off by an abnormal close (1006: no close frame; 1001, 1011, ...: the peer gave up). */
function cutOff(what: string, code: number): TransportError {
  const how =
    code === 1006
      ? ': the connection was lost without a close frame (code 1006)'
      : `: the server closed with code ${code}`;
  return streamCutOff(what, how, { code: 'TRANSPORT_FAILED' });
}

/** A call needs its own connection when it routes by path or sends per-call headers. */
function perToolOrHeaders(settings: WsSettings, headerValues: Record<string, string>): boolean {
  return settings.toolRouting === 'path_per_tool' || Object.keys(headerValues).length > 0;
}
