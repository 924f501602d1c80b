/**
 * Tool calls of the UTCP client (docs/design/README.md#client-layout): lookup and checks before a call, one
 * deadline per call, the transport's call options, typed and redacted errors, post-processing. Works on the
 * client's shared state (`client-core.ts`); `UtcpClientBase` (`client.ts`) exposes `callTool` and
 * `callToolStreaming`.
 */
import { encodeBytes, fillRequiredDefaults } from './argument-defaults.js';
import { ClientCore, messageOf, remoteTemplate, requireString } from './client-core.js';
import type { CallToolOptions } from './client-types.js';
import {
  abortError,
  attachCallScope,
  createDeadline,
  settleError,
  type AbortSource,
  type Deadline,
} from './deadline.js';
import { TransportError, UtcpArgumentsError, UtcpError } from './errors.js';
import type { CallOptions } from './transport.js';
import type { CallTemplateBase, JsonObject, Tool } from './types.js';
import { collectTemplateVariables } from './variables.js';

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
    const issues = await core.argValidator.validate(tool, callArgs);
    if (issues.length > 0) throw new UtcpArgumentsError(name, issues);
  }
  const substituted = hasVariables(core, template) ? core.substitute(template, manualName) : template;
  const transport = await core.transport(template.call_template_type);
  let remoteSource = core.remote.get(manualName);
  if (remoteSource === undefined) {
    // A repository filled by another process: judge by the stored manual template.
    const stored = await core.repo.getManual(manualName);
    remoteSource = stored ? remoteTemplate(stored.template) : false;
    core.remote.set(manualName, remoteSource);
  }
  return { tool, manualName, callArgs, substituted, transport, remoteSource };
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
  return core.redactor.error(new TransportError(`Tool ${name} failed: ${messageOf(error)}`, { cause: error }));
}

function postProcess(core: ClientCore, result: unknown, tool: Tool, manualName: string, args: JsonObject): unknown {
  let r = result;
  for (const p of core.post) r = p(r, { tool, manualName, args });
  return r;
}

/**
 * Calls a tool by its full name (`<manual>.<tool>`). `T` types the result for the caller; nothing checks it at
 * run time (a tool's `outputs` schema is documentation).
 * @throws ToolNotFoundError, UtcpArgumentsError, UtcpVariableNotFoundError, UtcpTimeoutError, UtcpAbortError,
 *   or the transport's typed error (HttpStatusError, CliExitError, ToolExecutionError, TransportError, ...).
 */
export async function callTool<T = unknown>(
  core: ClientCore,
  name: string,
  args: JsonObject | undefined,
  options: CallToolOptions,
): Promise<T> {
  const { tool, manualName, callArgs, substituted, transport, remoteSource } = await prepare(core, name, args);
  const call = openCall(core, options, name);
  const { timeoutMs } = call;
  let result: unknown;
  try {
    if (call.aborted) throw abortError(call, `Tool ${name}`, timeoutMs);
    result = await transport.callTool(
      tool,
      callArgs,
      substituted,
      transportOptions(call, options, tool, manualName, remoteSource),
    );
  } catch (error) {
    throw wrapError(core, error, call, name, timeoutMs);
  } finally {
    closeCall(core, call);
  }
  return postProcess(core, result, tool, manualName, callArgs) as T;
}

/**
 * A transport's options for one call. `signal` is built on first read (docs/design/http-exchange.md#deadlines):
 * transports that follow the call through its attached scope (the HTTP exchange) never create one.
 */
function transportOptions(
  call: Deadline,
  options: CallToolOptions,
  tool: Tool,
  manualName: string,
  remoteSource: boolean,
): CallOptions {
  return attachCallScope(
    {
      get signal() {
        return call.signal;
      },
      onProgress: options.onProgress,
      ...(options.callGate ? { callGate: options.callGate } : {}),
      manualName,
      rawTemplate: tool.tool_call_template,
      timeoutMs: call.timeoutMs,
      raw: options.raw,
      remoteSource,
    },
    call,
  );
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
  const { tool, manualName, callArgs, substituted, transport, remoteSource } = await prepare(core, name, args);
  const call = openCall(core, options, name);
  const { timeoutMs } = call;
  const callOptions = transportOptions(call, options, tool, manualName, remoteSource);
  try {
    if (transport.callToolStream) {
      for await (const item of transport.callToolStream(tool, callArgs, substituted, callOptions)) {
        yield postProcess(core, item, tool, manualName, callArgs) as T;
      }
    } else {
      const result = await transport.callTool(tool, callArgs, substituted, callOptions);
      yield postProcess(core, result, tool, manualName, callArgs) as T;
    }
  } catch (error) {
    throw wrapError(core, error, call, name, timeoutMs);
  } finally {
    closeCall(core, call, new UtcpError('ABORTED', 'Stream consumer stopped'));
  }
}
