/**
 * Tool calls of the UTCP client (docs/design/README.md#client-layout): lookup and checks before a call, one
 * deadline per call, the transport's call options, typed and redacted errors, post-processing. Works on the
 * client's shared state (`client-core.ts`); `UtcpClientBase` (`client.ts`) exposes `callTool` and
 * `callToolStreaming`.
 */
import { encodeBytes, fillRequiredDefaults } from './argument-defaults.js';
import { ClientCore, remoteTemplate, requireString } from './client-core.js';
import type { CallToolOptions } from './client-types.js';
import {
  abortError,
  CallScopeCarrier,
  createDeadline,
  settleError,
  type AbortSource,
  type Deadline,
} from './deadline.js';
import { TransportError, UtcpArgumentsError, UtcpError } from './errors.js';
import { openTrace, traceIterable, tracing, type Trace, type TraceStart } from './tracing.js';
import {
  ConcurrencyLimiter,
  DEFAULT_RESILIENCE,
  resolveResilience,
  templateResilience,
  type ResolvedResilience,
} from './resilience.js';
import type { CallOptions } from './transport.js';
import type { CallTemplateBase, JsonObject, Tool } from './types.js';
import { collectTemplateVariables } from './variables.js';
import { errorMessage } from './guards.js';

/** Per-call options from JavaScript callers may be anything: wrong types are INVALID_ARGUMENTS, before any work. */
function assertCallOptions(options: CallToolOptions, name: string): void {
  const bad = (what: string) => new UtcpError('INVALID_ARGUMENTS', `Call of tool ${name}: ${what}`);
  if (typeof options !== 'object' || options === null) throw bad('options must be an object');
  const { signal, onProgress } = options;
  if (
    signal !== undefined &&
    (typeof signal !== 'object' ||
      signal === null ||
      typeof (signal as AbortSignal).addEventListener !== 'function' ||
      typeof (signal as AbortSignal).aborted !== 'boolean')
  )
    throw bad('options.signal must be an AbortSignal');
  if (onProgress !== undefined && typeof onProgress !== 'function') throw bad('options.onProgress must be a function');
}

async function prepare(core: ClientCore, name: string, args: JsonObject | undefined) {
  core.assertOpen();
  requireString(name, 'A tool name');
  const tool = await core.repo.getTool(name);
  if (!tool) throw await core.notFound(name);
  const manualName = name.slice(0, name.indexOf('.'));
  const template = tool.tool_call_template;
  let allowed = core.allowed.get(manualName);
  if (!allowed) {
    // Registered by another client of a shared repository: use what it recorded.
    const stored = core.repo.getManualInfo
      ? await core.repo.getManualInfo(manualName)
      : await core.repo.getManual(manualName);
    allowed = stored?.allowedProtocols
      ? new Set(stored.allowedProtocols)
      : core.allowedProtocols(stored?.template ?? template, false);
    // Cached until a catalog change event says the manual changed.
    if (stored && core.repo.subscribe) core.allowed.set(manualName, allowed);
  }
  {
    if (!allowed.has(template.call_template_type)) {
      throw new UtcpError(
        'PROTOCOL_NOT_ALLOWED',
        `Tool ${name} uses protocol "${template.call_template_type}", which manual ${manualName} does not allow [${[...allowed].join(', ')}]`,
      );
    }
  }
  const given: JsonObject = args ?? {};
  if (typeof given !== 'object' || Array.isArray(given))
    throw new UtcpArgumentsError(name, [{ path: '(arguments)', message: 'must be an object' }]);
  const callArgs = fillRequiredDefaults(tool.inputs, encodeBytes(given));
  if (core.argValidator) {
    // Without a promise once the schema is compiled (docs/design/http-exchange.md#per-call-cost).
    const issues = core.argValidator.validateNow(tool, callArgs) ?? (await core.argValidator.validate(tool, callArgs));
    if (issues.length > 0) throw new UtcpArgumentsError(name, issues);
  }
  const substituted = hasVariables(core, template) ? core.substitute(template, manualName) : template;
  const transport =
    core.readyTransports.get(template.call_template_type) ?? (await core.transport(template.call_template_type));
  let remoteSource = core.remote.get(manualName);
  if (remoteSource === undefined) {
    // A repository filled by another process: judge by the stored manual template.
    const stored = await core.repo.getManual(manualName);
    remoteSource = stored ? remoteTemplate(stored.template) : false;
    core.remote.set(manualName, remoteSource);
  }
  let manualLayer = core.manualResilience.get(manualName);
  if (manualLayer === undefined) {
    // Registered by another client of a shared repository: read the stored manual template once.
    const stored = core.repo.getManualInfo
      ? await core.repo.getManualInfo(manualName)
      : await core.repo.getManual(manualName);
    manualLayer = templateResilience(stored?.template) ?? null;
    core.manualResilience.set(manualName, manualLayer);
  }
  const resilience =
    core.resilienceLayers.length === 0 && manualLayer === null && template.resilience == null
      ? DEFAULT_RESILIENCE
      : resolveResilience(...core.resilienceLayers, manualLayer, templateResilience(template));
  return { tool, manualName, callArgs, substituted, transport, remoteSource, resilience };
}

/**
 * Waits for a slot of the manual's concurrency limit (docs/design/resilience.md#concurrency); callers skip it when
 * the manual has no limit, so an unlimited call awaits nothing more. @returns the release function.
 */
async function takeSlot(
  core: ClientCore,
  manualName: string,
  resilience: ResolvedResilience,
  call: Deadline,
  name: string,
): Promise<() => void> {
  const limit = resilience.maxConcurrency!;
  let limiter = core.limiters.get(manualName);
  if (!limiter || limiter.limit !== limit) core.limiters.set(manualName, (limiter = new ConcurrencyLimiter(limit)));
  const wait = limiter.acquire(call, `Tool ${name}`, call.timeoutMs);
  if (wait) await wait;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    limiter.release();
  };
}

/** Stored templates never change, so whether one references variables is computed once. */
function hasVariables(core: ClientCore, template: CallTemplateBase): boolean {
  let has = core.templateHasVars.get(template);
  if (has === undefined) core.templateHasVars.set(template, (has = collectTemplateVariables(template, '_').length > 0));
  return has;
}

/**
 * One deadline per call (core/deadline.ts): linked by hand to the caller's signal, aborted by `close()`
 * through the in-flight set (no listener on a long-lived signal), armable so a transport's own
 * timeout (`withTimeout`) lands on this same signal instead of a second controller.
 */
function openCall(core: ClientCore, options: CallToolOptions, name: string): Deadline {
  assertCallOptions(options, name);
  const deadline = createDeadline(options.signal, options.timeoutMs ?? core.timeoutMs, `Tool ${name}`, {
    armable: true,
  });
  if (core.closed) deadline.abort(new UtcpError('CLIENT_CLOSED', 'The client was closed'));
  else core.inflight.add(deadline);
  return deadline;
}

function closeCall(core: ClientCore, call: Deadline, reason?: unknown): void {
  core.inflight.delete(call);
  if (reason === undefined) call.dispose();
  else call.abort(reason);
}

/** The one place call errors leave the client: typed, and with every substituted value redacted. */
function wrapError(
  core: ClientCore,
  error: unknown,
  signal: AbortSource,
  name: string,
  timeoutMs: number | undefined,
): unknown {
  const settled = settleError(error, signal, `Tool ${name}`, timeoutMs);
  if (settled instanceof UtcpError) return core.redactor.error(settled);
  return core.redactor.error(new TransportError(`Tool ${name} failed: ${errorMessage(error)}`, { cause: error }));
}

function postProcess(core: ClientCore, result: unknown, tool: Tool, manualName: string, args: JsonObject): unknown {
  let r = result;
  for (const p of core.post) r = p(r, { tool, manualName, args });
  return r;
}

/**
 * Calls a tool by its full name (`<manual>.<tool>`). `T` types the result for the caller; nothing checks it at
 * run time (a tool's `outputs` schema is documentation). Traced as one `execute_tool` span when someone listens
 * (docs/design/observability.md#tool-spans).
 * @throws ToolNotFoundError, UtcpArgumentsError, UtcpVariableNotFoundError, UtcpTimeoutError, UtcpAbortError,
 *   or the transport's typed error (HttpStatusError, CliExitError, ToolExecutionError, TransportError, ...).
 */
export function callTool<T = unknown>(
  core: ClientCore,
  name: string,
  args: JsonObject | undefined,
  options: CallToolOptions,
): Promise<T> {
  if (!tracing('tool')) return runCall<T>(core, name, args, options, undefined);
  return tracedCall<T>(core, name, args, options);
}

async function tracedCall<T>(
  core: ClientCore,
  name: string,
  args: JsonObject | undefined,
  options: CallToolOptions,
): Promise<T> {
  const trace = await openTrace('tool', () => toolTraceStart(core, name, options));
  if (!trace) return runCall<T>(core, name, args, options, undefined);
  try {
    const result = await runCall<T>(core, name, args, options, trace);
    trace.set({ 'utcp.outcome': 'ok' }, { outcome: 'ok' });
    return result;
  } catch (error) {
    trace.set({ 'utcp.outcome': 'error' }, { outcome: 'error' });
    trace.fail(error);
    throw error;
  } finally {
    trace.end();
  }
}

/**
 * The span and channel message of one call: names and ids only, never arguments, results or template values
 * (docs/design/observability.md#attributes).
 */
function toolTraceStart(core: ClientCore, name: string, options: CallToolOptions): TraceStart {
  const tool = typeof name === 'string' ? name : undefined;
  const dot = tool?.indexOf('.') ?? -1;
  const manual = tool && dot > 0 ? tool.slice(0, dot) : undefined;
  const t = typeof options === 'object' && options !== null ? options.tracing : undefined;
  const toolCallId = typeof t?.toolCallId === 'string' ? t.toolCallId : undefined;
  return {
    name: tool ? `execute_tool ${tool}` : 'execute_tool',
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool,
      'gen_ai.tool.call.id': toolCallId,
      'utcp.manual.name': manual,
    },
    parent: t?.parentContext,
    message: { tool, manual, toolCallId },
    redact: (text) => core.redactor.text(text),
  };
}

/** Tells the trace the call's transport once the tool is known. */
function noteTransport(trace: Trace | undefined, type: string): void {
  trace?.set({ 'utcp.call_template_type': type }, { callTemplateType: type });
}

async function runCall<T>(
  core: ClientCore,
  name: string,
  args: JsonObject | undefined,
  options: CallToolOptions,
  trace: Trace | undefined,
): Promise<T> {
  const { tool, manualName, callArgs, substituted, transport, remoteSource, resilience } = await prepare(
    core,
    name,
    args,
  );
  noteTransport(trace, substituted.call_template_type);
  const call = openCall(core, options, name);
  const { timeoutMs } = call;
  let result: unknown;
  let release: (() => void) | undefined;
  try {
    if (call.aborted) throw abortError(call, `Tool ${name}`, timeoutMs);
    if (resilience.maxConcurrency !== undefined) release = await takeSlot(core, manualName, resilience, call, name);
    const callOptions = new CallOptionsOfCall(call, options, tool, manualName, remoteSource, resilience);
    result = await (trace
      ? trace.run(() => transport.callTool(tool, callArgs, substituted, callOptions))
      : transport.callTool(tool, callArgs, substituted, callOptions));
  } catch (error) {
    throw wrapError(core, error, call, name, timeoutMs);
  } finally {
    release?.();
    closeCall(core, call);
  }
  return postProcess(core, result, tool, manualName, callArgs) as T;
}

/**
 * A transport's options for one call. `signal` is built on first read (docs/design/http-exchange.md#deadlines):
 * transports that follow the call through its attached scope (the HTTP exchange) never create one. The same own
 * keys, in the same order, as the object literal this class replaced (docs/design/http-exchange.md#per-call-cost).
 */
class CallOptionsOfCall extends CallScopeCarrier implements CallOptions {
  declare onProgress: CallOptions['onProgress'];
  declare callGate?: CallOptions['callGate'];
  declare manualName: string;
  declare rawTemplate: CallOptions['rawTemplate'];
  declare timeoutMs: number | undefined;
  declare deadline: number | undefined;
  declare raw: boolean | undefined;
  declare remoteSource: boolean;
  declare resilience: ResolvedResilience;
  constructor(
    call: Deadline,
    options: CallToolOptions,
    tool: Tool,
    manualName: string,
    remoteSource: boolean,
    resilience: ResolvedResilience,
  ) {
    super(call);
    this.onProgress = options.onProgress;
    if (options.callGate) this.callGate = options.callGate;
    this.manualName = manualName;
    this.rawTemplate = tool.tool_call_template;
    this.timeoutMs = call.timeoutMs;
    this.deadline = call.deadlineAt;
    this.raw = options.raw;
    this.remoteSource = remoteSource;
    this.resilience = resilience;
  }
}

/**
 * Calls a tool and yields its results as they arrive. One-shot protocols yield exactly one item.
 * Breaking out of the loop cancels the call.
 */
export async function* callToolStreaming<T = unknown>(
  core: ClientCore,
  name: string,
  args: JsonObject | undefined,
  options: CallToolOptions,
): AsyncGenerator<T, void, undefined> {
  const trace = tracing('tool') ? await openTrace('tool', () => toolTraceStart(core, name, options)) : undefined;
  let outcome = 'cancelled';
  try {
    yield* streamCall<T>(core, name, args, options, trace);
    outcome = 'ok';
  } catch (error) {
    outcome = 'error';
    trace?.fail(error);
    throw error;
  } finally {
    trace?.set({ 'utcp.outcome': outcome }, { outcome });
    trace?.end();
  }
}

async function* streamCall<T>(
  core: ClientCore,
  name: string,
  args: JsonObject | undefined,
  options: CallToolOptions,
  trace: Trace | undefined,
): AsyncGenerator<T, void, undefined> {
  const { tool, manualName, callArgs, substituted, transport, remoteSource, resilience } = await prepare(
    core,
    name,
    args,
  );
  noteTransport(trace, substituted.call_template_type);
  const call = openCall(core, options, name);
  const { timeoutMs } = call;
  const callOptions = new CallOptionsOfCall(call, options, tool, manualName, remoteSource, resilience);
  let release: (() => void) | undefined;
  try {
    if (resilience.maxConcurrency !== undefined) release = await takeSlot(core, manualName, resilience, call, name);
    if (transport.callToolStream) {
      const stream = transport.callToolStream(tool, callArgs, substituted, callOptions);
      for await (const item of trace ? traceIterable(trace, stream) : stream) {
        yield postProcess(core, item, tool, manualName, callArgs) as T;
      }
    } else {
      const result = await (trace
        ? trace.run(() => transport.callTool(tool, callArgs, substituted, callOptions))
        : transport.callTool(tool, callArgs, substituted, callOptions));
      yield postProcess(core, result, tool, manualName, callArgs) as T;
    }
  } catch (error) {
    throw wrapError(core, error, call, name, timeoutMs);
  } finally {
    release?.();
    closeCall(core, call, new UtcpError('ABORTED', 'Stream consumer stopped'));
  }
}
