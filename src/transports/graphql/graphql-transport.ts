import type { WebSocket as WsWebSocket } from 'ws';
import { assertDialAllowed, guardedLookup } from '../../net/dial-guard.js';
import { TransportError, UtcpError } from '../../core/errors.js';
import { abortError, createDeadline, type Deadline, scopeController } from '../../core/deadline.js';
import type { CallOptions, DiscoveryResult, Transport, TransportContext } from '../../core/transport.js';
import type { JsonObject, Tool } from '../../core/types.js';
import type { GraphqlCallTemplate } from './template.js';
import { assertUrlAllowed } from '../../core/url-policy.js';
import { GraphqlError } from './graphql-error.js';
import { buildDocument, isGeneratedDocument, type OperationType } from './graphql-document.js';
import { INTROSPECTION_QUERY, type IntrospectionSchema } from './introspection-query.js';
import { loadGraphqlParser, loadWebSocket, type GraphqlParser } from './load-modules.js';
import { exchangeDefaults } from '../../http/http-dispatcher.js';
import { assertIntrospectionSchema, toolsFromIntrospection } from './manual-from-introspection.js';
import { postGraphql, type GraphqlBody, type GraphqlResponse } from './post-graphql.js';
import { buildRequestParts } from './request-parts.js';
import { subscribeGraphql } from './subscribe-graphql.js';
import { NoHttpSubscription, subscribeOverHttp } from './subscribe-http.js';
import { errorMessage } from '../../core/guards.js';

/** Template timeout in ms when `timeout` is absent or not a positive number. */
export const DEFAULT_GRAPHQL_TIMEOUT_MS = 30_000;

const OPERATIONS: ReadonlySet<string> = new Set(['query', 'mutation', 'subscription']);
const SUBSCRIPTION_TRANSPORTS: ReadonlySet<string> = new Set(['auto', 'websocket', 'sse', 'multipart']);
type SubscriptionTransport = 'auto' | 'websocket' | 'sse' | 'multipart';

/**
 * The `graphql` transport (docs/design/transports.md#graphql): discovery by introspection, queries and mutations
 * over HTTP POST, subscriptions over GraphQL over SSE, multipart HTTP, graphql-transport-ws or legacy graphql-ws
 * (docs/design/transports.md#graphql-http-subscriptions). One instance per client.
 */
export class GraphqlTransport implements Transport<GraphqlCallTemplate> {
  readonly type = 'graphql';
  readonly #ctx: TransportContext;
  readonly #closing = scopeController();
  /** Introspected schema per manual, kept from registration to deregistration. */
  readonly #schemas = new Map<string, IntrospectionSchema>();
  readonly #sockets = new Set<WsWebSocket>();
  /** Endpoints found (in auto mode) to serve subscriptions only over WebSocket: later calls skip the HTTP attempt. */
  readonly #websocketOnly = new Set<string>();
  #parser: GraphqlParser | undefined;

  constructor(ctx: TransportContext) {
    this.#ctx = ctx;
  }

  async registerManual(template: GraphqlCallTemplate, options: CallOptions): Promise<DiscoveryResult> {
    const what = `GraphQL discovery of manual ${options.manualName}`;
    const url = assertUrlAllowed(template.url, 'GraphQL manual discovery');
    this.#assertOpen();
    const deadline = this.#deadline(options.signal, template.timeout, what);
    try {
      const parser = await this.#loadParser();
      const parts = await buildRequestParts(url, template, {}, this.#ctx, deadline.signal);
      const response = await postGraphql(
        parts.url,
        { query: INTROSPECTION_QUERY, variables: {}, operationName: 'UtcpIntrospection' },
        {
          dispatcher: exchangeDefaults(this.#ctx).dispatcher,
          logger: exchangeDefaults(this.#ctx).logger,
          headers: parts.headers,
          signal: deadline.signal,
          maxBytes: this.#ctx.limits.max_document_bytes,
          what,
        },
      );
      if (Array.isArray(response.errors) && response.errors.length > 0)
        throw new GraphqlError(what, response.errors, response.data);
      const schema = (response.data as { __schema?: unknown } | null | undefined)?.__schema;
      assertIntrospectionSchema(schema);
      this.#schemas.set(options.manualName, schema);
      const raw = options.rawTemplate as GraphqlCallTemplate;
      const { tools, warnings } = toolsFromIntrospection(schema, raw, parser);
      return { manual: { utcp_version: '1.0.0', manual_version: '1.0.0', tools }, warnings };
    } catch (error) {
      throw this.#failure(error, deadline.signal, options, what);
    } finally {
      deadline.dispose();
    }
  }

  async callTool(tool: Tool, args: JsonObject, template: GraphqlCallTemplate, options: CallOptions): Promise<unknown> {
    if (operationOf(template) === 'subscription') {
      const what = `GraphQL subscription ${tool.name}`;
      const deadline = this.#deadline(options.signal, template.timeout, what);
      try {
        for await (const item of this.#subscribe(tool, args, template, options, deadline.signal, deadline.signal))
          return item;
        return null;
      } catch (error) {
        throw this.#failure(error, deadline.signal, options, what);
      } finally {
        deadline.dispose();
      }
    }
    return this.#execute(tool, args, template, options);
  }

  async *callToolStream(
    tool: Tool,
    args: JsonObject,
    template: GraphqlCallTemplate,
    options: CallOptions,
  ): AsyncGenerator<unknown, void, undefined> {
    if (operationOf(template) !== 'subscription') {
      yield await this.#execute(tool, args, template, options);
      return;
    }
    const what = `GraphQL subscription ${tool.name}`;
    const scope = createDeadline([options.signal, this.#closing.signal], undefined, what);
    const setup = this.#deadline(scope.signal, template.timeout, what);
    try {
      yield* this.#subscribe(tool, args, template, options, scope.signal, setup.signal, () => setup.clearTimer());
    } catch (error) {
      throw this.#failure(error, setup.signal, options, what);
    } finally {
      setup.dispose();
      scope.dispose();
    }
  }

  async deregisterManual(_template: GraphqlCallTemplate, options: { manualName: string }): Promise<void> {
    this.#schemas.delete(options.manualName);
  }

  async close(): Promise<void> {
    if (!this.#closing.signal.aborted)
      this.#closing.abort(new UtcpError('CLIENT_CLOSED', 'The graphql transport was closed'));
    for (const socket of this.#sockets) socket.terminate();
    this.#sockets.clear();
    this.#schemas.clear();
  }

  // ------------------------------------------------------------------ queries and mutations

  async #execute(tool: Tool, args: JsonObject, template: GraphqlCallTemplate, options: CallOptions): Promise<unknown> {
    const what = `GraphQL tool ${tool.name}`;
    const url = assertUrlAllowed(template.url, 'GraphQL tool invocation');
    this.#assertOpen();
    const deadline = this.#deadline(options.signal, template.timeout, what);
    try {
      const field = wireName(tool, options);
      const parts = await buildRequestParts(url, template, args, this.#ctx, deadline.signal, options.remoteSource);
      const { body, unwrap } = await this.#document(field, template, parts.variables, options.manualName);
      const response = await postGraphql(parts.url, body, {
        dispatcher: exchangeDefaults(this.#ctx).dispatcher,
        logger: exchangeDefaults(this.#ctx).logger,
        headers: parts.headers,
        signal: deadline.signal,
        maxBytes: this.#ctx.limits.max_response_bytes,
        remoteSource: options.remoteSource,
        what,
      });
      return resultOf(response, unwrap ? field : undefined, what);
    } catch (error) {
      throw this.#failure(error, deadline.signal, options, what);
    } finally {
      deadline.dispose();
    }
  }

  // ------------------------------------------------------------------ subscriptions

  async *#subscribe(
    tool: Tool,
    args: JsonObject,
    template: GraphqlCallTemplate,
    options: CallOptions,
    signal: AbortSignal,
    setupSignal: AbortSignal,
    onReady?: () => void,
  ): AsyncGenerator<unknown, void, undefined> {
    const what = `GraphQL subscription ${tool.name}`;
    const mode = subscriptionTransportOf(template);
    const explicitWs = typeof template.subscription_url === 'string' && /^wss?:/i.test(template.subscription_url);
    this.#assertOpen();
    const field = wireName(tool, options);
    if (mode !== 'websocket' && !(mode === 'auto' && explicitWs)) {
      const httpUrl = assertUrlAllowed(httpSubscriptionUrl(template), 'GraphQL subscription');
      if (mode !== 'auto' || !this.#websocketOnly.has(httpUrl.href)) {
        const parts = await buildRequestParts(httpUrl, template, args, this.#ctx, setupSignal, options.remoteSource);
        const { body, unwrap } = await this.#document(field, template, parts.variables, options.manualName);
        const stream = subscribeOverHttp({
          dispatcher: exchangeDefaults(this.#ctx).dispatcher,
          remoteSource: options.remoteSource,
          url: parts.url,
          headers: parts.headers,
          body,
          mode,
          // Both signals already follow this transport's close (see #deadline and callToolStream).
          signal,
          setupSignal,
          maxItemBytes: this.#ctx.limits.max_stream_item_bytes,
          what,
          onReady,
        });
        try {
          for await (const payload of stream) yield resultOf(payload, unwrap ? field : undefined, what);
          return;
        } catch (error) {
          if (!(error instanceof NoHttpSubscription)) throw error;
          // Not served over HTTP: try the WebSocket protocols, and remember the answer for this endpoint.
          this.#ctx.logger.debug?.(`${what}: ${error.reason} for an HTTP subscription; trying WebSocket`);
          try {
            yield* this.#subscribeWs(field, template, args, options, signal, setupSignal, onReady);
            this.#websocketOnly.add(httpUrl.href);
            return;
          } catch (wsError) {
            if (
              wsError instanceof UtcpError &&
              (wsError.code === 'TIMEOUT' || wsError.code === 'ABORTED' || wsError.code === 'CLIENT_CLOSED')
            )
              throw wsError;
            throw new TransportError(
              `${what}: no subscription transport worked: HTTP (SSE or multipart) got ${error.reason}; WebSocket: ${(wsError as Error).message}`,
              { cause: wsError },
            );
          }
        }
      }
    }
    yield* this.#subscribeWs(field, template, args, options, signal, setupSignal, onReady);
  }

  async *#subscribeWs(
    field: string,
    template: GraphqlCallTemplate,
    args: JsonObject,
    options: CallOptions,
    signal: AbortSignal,
    setupSignal: AbortSignal,
    onReady?: () => void,
  ): AsyncGenerator<unknown, void, undefined> {
    const what = `GraphQL subscription ${options.manualName}.${field}`;
    const url = assertUrlAllowed(subscriptionUrl(template), 'GraphQL subscription', 'ws');
    const parts = await buildRequestParts(url, template, args, this.#ctx, setupSignal, options.remoteSource);
    const { body, unwrap } = await this.#document(field, template, parts.variables, options.manualName);
    const WebSocket = await loadWebSocket();
    // The dial guard: a remote manual's subscription may not reach loopback, by literal or by resolution.
    assertDialAllowed(parts.url.hostname, options.remoteSource === true, what);
    const stream = subscribeGraphql({
      WebSocket,
      lookup: guardedLookup({
        remote: options.remoteSource === true,
        lookup: this.#ctx.lookup,
        closing: setupSignal,
        what,
      }),
      url: parts.url,
      headers: parts.headers,
      body,
      // Both signals already follow this transport's close (see #deadline and callToolStream).
      signal,
      setupSignal,
      maxMessageBytes: this.#ctx.limits.max_stream_item_bytes,
      maxBufferedBytes: this.#ctx.limits.max_response_bytes,
      what,
      onReady,
      track: (socket) => {
        this.#sockets.add(socket);
        return () => this.#sockets.delete(socket);
      },
    });
    for await (const payload of stream) yield resultOf(payload, unwrap ? field : undefined, what);
  }

  // ------------------------------------------------------------------ helpers

  /** The document to send and whether its result is `data[field]` (generated) or `data` (custom). */
  async #document(
    field: string,
    template: GraphqlCallTemplate,
    variables: JsonObject,
    manualName: string,
  ): Promise<{ body: GraphqlBody; unwrap: boolean }> {
    const op = operationOf(template);
    let query = typeof template.query === 'string' && template.query.trim() !== '' ? template.query : undefined;
    let unwrap: boolean;
    if (query) {
      unwrap = isGeneratedDocument(await this.#loadParser(), query, field);
    } else {
      query =
        this.#fromCachedSchema(manualName, op, field) ??
        buildDocument(op, field, declaredVariables(variables, template.variable_types));
      unwrap = true;
    }
    const body: GraphqlBody = { query, variables };
    if (typeof template.operation_name === 'string' && template.operation_name)
      body.operationName = template.operation_name;
    return { body, unwrap };
  }

  /** A template without `query` (from another implementation) gets a full document when this manual's schema is known. */
  #fromCachedSchema(manualName: string, op: OperationType, field: string): string | undefined {
    const schema = this.#schemas.get(manualName);
    if (!schema || !this.#parser) return undefined;
    const { tools } = toolsFromIntrospection(schema, { call_template_type: 'graphql', url: '' }, this.#parser);
    const tool = tools.find((t) => t.name === field && t.tool_call_template.operation_type === op);
    return tool?.tool_call_template.query ?? undefined;
  }

  async #loadParser(): Promise<GraphqlParser> {
    this.#parser ??= await loadGraphqlParser();
    return this.#parser;
  }

  #assertOpen(): void {
    if (this.#closing.signal.aborted) throw new UtcpError('CLIENT_CLOSED', 'The graphql transport was closed');
  }

  /** The caller's signal, this transport's close, and the template timeout, as one signal. */
  #deadline(parent: AbortSignal, timeout: unknown, what: string): Deadline {
    const ms =
      typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_GRAPHQL_TIMEOUT_MS;
    return createDeadline([parent, this.#closing.signal], ms, what);
  }

  /** Maps an abort to its typed error (timeout, caller abort, close) and wraps untyped failures in TransportError. */
  #failure(error: unknown, signal: AbortSignal, options: CallOptions, what: string): unknown {
    if (signal.aborted) {
      if (
        error instanceof UtcpError &&
        (error.code === 'TIMEOUT' || error.code === 'ABORTED' || error.code === 'CLIENT_CLOSED')
      )
        return error;
      const typed = abortError(signal, what, options.timeoutMs);
      if (!typed.cause && error !== signal.reason) (typed as { cause?: unknown }).cause = error;
      return typed;
    }
    if (error instanceof UtcpError) return error;
    const reason = errorMessage(error);
    return new TransportError(`${what} failed: ${reason}`, { cause: error });
  }
}

function operationOf(template: GraphqlCallTemplate): OperationType {
  const op = template.operation_type ?? 'query';
  if (!OPERATIONS.has(op))
    throw new UtcpError(
      'INVALID_MANUAL',
      `GraphQL operation_type must be query, mutation or subscription, not ${String(op)}`,
    );
  return op;
}

function wireName(tool: Tool, options: CallOptions): string {
  const prefix = `${options.manualName}.`;
  return tool.name.startsWith(prefix) ? tool.name.slice(prefix.length) : tool.name;
}

/** Variables declared with their `variable_types` entry, `String` when unknown. */
function declaredVariables(
  variables: JsonObject,
  types: Record<string, string> | null | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(variables)) out[name] = types?.[name] ?? 'String';
  return out;
}

/** *ext.* `subscription_transport`: `auto` (default), `websocket`, `sse` or `multipart`. */
function subscriptionTransportOf(template: GraphqlCallTemplate): SubscriptionTransport {
  const value = template.subscription_transport ?? 'auto';
  if (!SUBSCRIPTION_TRANSPORTS.has(value)) {
    throw new UtcpError(
      'INVALID_MANUAL',
      `GraphQL subscription_transport must be auto, websocket, sse or multipart, not ${String(value)}`,
    );
  }
  return value;
}

/** The URL of HTTP subscriptions: an http(s) `subscription_url`, else `url`. */
function httpSubscriptionUrl(template: GraphqlCallTemplate): string {
  const own = template.subscription_url;
  return typeof own === 'string' && /^https?:/i.test(own) ? own : template.url;
}

/** `subscription_url`, else `url` with http→ws and https→wss. */
function subscriptionUrl(template: GraphqlCallTemplate): string {
  if (typeof template.subscription_url === 'string' && template.subscription_url) {
    return template.subscription_url.replace(/^http(s?):/i, (_m, sec: string) => `ws${sec}:`);
  }
  return template.url.replace(/^http(s?):/i, (_m, s: string) => `ws${s}:`);
}

/** Raises `errors`; returns `data[field]` for generated documents and `data` otherwise. */
function resultOf(response: GraphqlResponse, field: string | undefined, what: string): unknown {
  if (Array.isArray(response.errors) && response.errors.length > 0)
    throw new GraphqlError(what, response.errors, response.data);
  const data = response.data ?? null;
  if (field === undefined) return data;
  return typeof data === 'object' && data !== null ? ((data as Record<string, unknown>)[field] ?? null) : null;
}
