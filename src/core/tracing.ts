/**
 * Traces of tool calls, manual registrations, model requests and agent runs (docs/design/observability.md):
 * OpenTelemetry spans through the global `@opentelemetry/api` (an optional peer, imported on first use and only
 * while a tracer provider is registered), and the same events on `node:diagnostics_channel` tracing channels.
 * When neither is listening, `tracing(kind)` is false and callers skip all of it
 * (docs/design/observability.md#absent).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, tracingChannel } from 'node:diagnostics_channel';
// Type-only: erased from the build; the package is imported on first use (docs/design/observability.md#absent).
import type * as Otel from '@opentelemetry/api';

export type TraceKind = 'tool' | 'register' | 'model' | 'agent';

/** The diagnostics channel names (docs/design/observability.md#channels). */
export const TRACE_CHANNELS = {
  tool: 'utcp-kit:tool',
  register: 'utcp-kit:register',
  model: 'utcp-kit:model',
  agent: 'utcp-kit:agent',
} as const satisfies Record<TraceKind, string>;

/** Published by the tool-call retry logic during a call; recorded as a `retry` event on the call's span. */
export const TOOL_RETRY_CHANNEL = 'utcp-kit:tool:retry';

/** Span attributes; `undefined` values are left out. */
export type TraceAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** What a new trace starts with. */
export interface TraceStart {
  /** Span name, e.g. `execute_tool github.search`. */
  name: string;
  /** A CLIENT span (a request to a remote service); INTERNAL otherwise. */
  client?: boolean;
  attributes: TraceAttributes;
  /** An OpenTelemetry `Context` to parent the span on; otherwise the active context. */
  parent?: unknown;
  /** The diagnostics channel message; the trace adds to it (`outcome`, `error`, ...). */
  message: Record<string, unknown>;
  /** Redacts text recorded from outside (a retry's reason). */
  redact?: (text: string) => string;
}

/** One traced operation: an OpenTelemetry span, a diagnostics channel message, or both. */
export interface Trace {
  readonly kind: TraceKind;
  /** An OpenTelemetry `Context` holding this span, to parent children on; undefined without OpenTelemetry. */
  readonly context: unknown;
  /** Adds span attributes, and fields to the channel message. */
  set(attributes: TraceAttributes, message?: Record<string, unknown>): void;
  rename(name: string): void;
  /** Adds a span event. */
  event(name: string, attributes: TraceAttributes): void;
  /** Runs `fn` with this span active (for auto-instrumented children and retry events). */
  run<T>(fn: () => T): T;
  /** Marks the operation failed: `error.type`, error status, the channel's `error` event. */
  fail(error: unknown, errorType?: string): void;
  /** Ends the span and publishes the channel's `asyncStart`/`asyncEnd`. Idempotent. */
  end(): void;
}

const channels = {
  tool: tracingChannel(TRACE_CHANNELS.tool),
  register: tracingChannel(TRACE_CHANNELS.register),
  model: tracingChannel(TRACE_CHANNELS.model),
  agent: tracingChannel(TRACE_CHANNELS.agent),
};
type Channel = (typeof channels)[TraceKind];

/** Where `@opentelemetry/api` 1.x keeps its registered globals (one slot per major version, shared by every copy). */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

function providerRegistered(): boolean {
  return (globalThis as unknown as Record<symbol, { trace?: unknown } | undefined>)[OTEL_GLOBAL]?.trace !== undefined;
}

/**
 * True when someone listens: a tracer provider is registered, or the kind's channel has subscribers. Cheap (a
 * global lookup and a getter), so call paths check it before building anything.
 */
export function tracing(kind: TraceKind): boolean {
  return providerRegistered() || channels[kind].hasSubscribers;
}

/** The imported API once loaded; `false` when it cannot be imported. A cache of a module, not state. */
let api: typeof Otel | false | undefined;
let loading: Promise<typeof Otel | false> | undefined;

async function loadOtel(): Promise<typeof Otel | undefined> {
  if (api === undefined) {
    loading ??= import('@opentelemetry/api').then(
      (m) => {
        subscribe(TOOL_RETRY_CHANNEL, onToolRetry);
        return m;
      },
      () => false as const,
    );
    api = await loading;
  }
  return api || undefined;
}

/** The traced operation whose code is running, for matching retry messages to their call. */
const current = new AsyncLocalStorage<ActiveTrace>();

function onToolRetry(message: unknown): void {
  const trace = current.getStore();
  if (trace?.kind !== 'tool') return;
  const m = (message ?? {}) as { attempt?: unknown; delayMs?: unknown; reason?: unknown };
  trace.event('retry', {
    'utcp.retry.attempt': typeof m.attempt === 'number' ? m.attempt : undefined,
    'utcp.retry.delay_ms': typeof m.delayMs === 'number' ? m.delayMs : undefined,
    'utcp.retry.reason': typeof m.reason === 'string' ? trace.redact(m.reason).slice(0, 200) : undefined,
  });
}

/**
 * Starts a trace of `kind`, or returns undefined when nobody listens (or `@opentelemetry/api` is missing and no
 * channel has subscribers).
 */
export async function openTrace(kind: TraceKind, start: () => TraceStart): Promise<Trace | undefined> {
  const channel = channels[kind].hasSubscribers ? channels[kind] : undefined;
  const otel = providerRegistered() ? await loadOtel() : undefined;
  if (!otel && !channel) return undefined;
  return new ActiveTrace(kind, start(), otel, channel);
}

function isContext(value: unknown): value is Otel.Context {
  const c = value as Otel.Context | null;
  return typeof c === 'object' && c !== null && typeof c.getValue === 'function' && typeof c.setValue === 'function';
}

function defined(attributes: TraceAttributes): Otel.Attributes {
  const out: Otel.Attributes = {};
  for (const key in attributes) if (attributes[key] !== undefined) out[key] = attributes[key];
  return out;
}

/**
 * `error.type`: an HTTP status when the error has one, else the `UtcpError` code, else the error's class name
 * (docs/design/observability.md#attributes). Never the message: it may hold URLs or argument values.
 */
export function errorType(error: unknown): string {
  const e = error as { status?: unknown; code?: unknown; name?: unknown } | null;
  if (typeof e !== 'object' || e === null) return '_OTHER';
  if (typeof e.status === 'number') return String(e.status);
  if (typeof e.code === 'string' && e.code !== '') return e.code;
  return typeof e.name === 'string' && e.name !== '' ? e.name : '_OTHER';
}

const noRedact = (text: string) => text;

class ActiveTrace implements Trace {
  readonly kind: TraceKind;
  readonly context: Otel.Context | undefined;
  readonly redact: (text: string) => string;
  readonly #otel: typeof Otel | undefined;
  readonly #span: Otel.Span | undefined;
  readonly #channel: Channel | undefined;
  readonly #message: Record<string, unknown>;
  #ended = false;

  constructor(kind: TraceKind, start: TraceStart, otel: typeof Otel | undefined, channel: Channel | undefined) {
    this.kind = kind;
    this.redact = start.redact ?? noRedact;
    this.#otel = otel;
    this.#channel = channel;
    this.#message = start.message;
    if (otel) {
      const parent = isContext(start.parent) ? start.parent : otel.context.active();
      this.#span = otel.trace
        .getTracer('utcp-kit')
        .startSpan(
          start.name,
          { kind: start.client ? otel.SpanKind.CLIENT : otel.SpanKind.INTERNAL, attributes: defined(start.attributes) },
          parent,
        );
      this.context = otel.trace.setSpan(parent, this.#span);
    }
    // The order of `tracePromise`: start, end of the synchronous part, later error?, asyncStart, asyncEnd.
    channel?.start.publish(this.#message);
    channel?.end.publish(this.#message);
  }

  set(attributes: TraceAttributes, message?: Record<string, unknown>): void {
    this.#span?.setAttributes(defined(attributes));
    if (message) Object.assign(this.#message, message);
  }

  rename(name: string): void {
    this.#span?.updateName(name);
  }

  event(name: string, attributes: TraceAttributes): void {
    this.#span?.addEvent(name, defined(attributes));
  }

  run<T>(fn: () => T): T {
    const otel = this.#otel;
    if (!otel || !this.context) return fn();
    return otel.context.with(this.context, () => current.run(this, fn));
  }

  fail(error: unknown, type = errorType(error)): void {
    if (this.#ended) return;
    if (this.#span && this.#otel) {
      this.#span.setAttribute('error.type', type);
      this.#span.setStatus({ code: this.#otel.SpanStatusCode.ERROR });
    }
    this.#message.error = error;
    this.#message.errorType = type;
    this.#channel?.error.publish(this.#message);
  }

  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#span?.end();
    this.#channel?.asyncStart.publish(this.#message);
    this.#channel?.asyncEnd.publish(this.#message);
  }
}

/**
 * Passes a stream's items through with the trace active while the source produces each one (`Trace.run` around
 * every `next()`), so retry events and auto-instrumented children of a streamed call find their span.
 */
export async function* traceIterable<T>(trace: Trace, source: AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
  const it = source[Symbol.asyncIterator]();
  let done = false;
  try {
    for (;;) {
      const r = await trace.run(() => it.next());
      if (r.done) {
        done = true;
        return;
      }
      yield r.value;
    }
  } catch (error) {
    done = true; // a source that threw is finished
    throw error;
  } finally {
    if (!done) await it.return?.();
  }
}
