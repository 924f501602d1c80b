/**
 * `runCode`: one script, one fresh QuickJS instance with no ambient authority, tools as async functions
 * (docs/design/code-mode.md#sandbox).
 */
import {
  UtcpError,
  onAbort,
  withTimeout,
  type CallGate,
  type JsonObject,
  type Tool,
  type UtcpClient,
} from '../index.js';
import { loadEngine } from './engine.js';
import { CodeModeError, type CodeModeCall } from './code-mode-error.js';
import { scriptToJavaScript } from './strip-types.js';
import { manualAccess, selectTools, type CodeToolSelection } from './script-names.js';

export interface RunCodeOptions {
  /** Wall-clock budget of the whole script, tool calls included, enforced by the engine. @default 30000 */
  timeoutMs?: number;
  /** Heap limit of the script's engine, in MiB. @default 64 */
  memoryLimitMb?: number;
  /** Which tools the script may call: names or globs (`github.*`), or a predicate. @default every registered tool */
  tools?: CodeToolSelection;
  /** Stops the script and its tool calls. */
  signal?: AbortSignal;
  /** Decides each tool call of the script before it runs (the agent loop passes its approval policy). */
  callGate?: CallGate;
  /** Most tool calls one script may make. @default 1000 */
  maxCalls?: number;
  /** Most characters of console output kept. @default 100000 */
  maxLogChars?: number;
}

export interface RunCodeResult {
  /** The script's `return` value (JSON round-tripped), `undefined` when it returned nothing. */
  result: unknown;
  /** `console.*` output, one entry per call, prefixed by the level for anything but `log`. */
  logs: string[];
  /** Every tool call the script made, in the order they started. */
  calls: CodeModeCall[];
}

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_TIMEOUT_MS = 600_000;
const DEFAULT_MEMORY_MB = 64;
const MAX_MEMORY_MB = 4096;
const STACK_BYTES = 256 * 1024;
const MAX_RESULT_CHARS = 4 * 1024 * 1024;
const MAIN = '__utcp_main';

function checkNumber(name: string, value: number | undefined, fallback: number, max: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0 || value > max)
    throw new CodeModeError('INVALID_ARGUMENTS', `runCode: ${name} must be a number from 1 to ${max}, got ${value}`);
  return value;
}

/**
 * The code evaluated before the script: builds one object of async functions per manual and `console`, from two
 * host functions it captures and then removes from the global object.
 */
function prelude(tools: readonly Tool[]): string {
  const manuals: Record<string, Record<string, string>> = {};
  for (const tool of tools) {
    const { manual, key } = manualAccess(tool.name);
    (manuals[manual] ??= {})[key] = tool.name;
  }
  return `(() => {
  'use strict';
  const call = globalThis.__utcp_call, log = globalThis.__utcp_log;
  delete globalThis.__utcp_call; delete globalThis.__utcp_log;
  const manuals = ${JSON.stringify(manuals)};
  const fn = (name) => async (args) => {
    const r = JSON.parse(await call(name, JSON.stringify(args === undefined ? {} : args)));
    if (r.ok) return r.value;
    const e = new Error(r.message); e.name = r.name; e.code = r.code; e.tool = name; throw e;
  };
  for (const m of Object.keys(manuals)) {
    const o = {};
    for (const k of Object.keys(manuals[m])) o[k] = fn(manuals[m][k]);
    Object.defineProperty(globalThis, m, { value: Object.freeze(o), enumerable: false });
  }
  const show = (v) => { if (typeof v === 'string') return v; try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch { return String(v); } };
  const say = (level) => (...a) => log(level, a.map(show).join(' '));
  globalThis.console = Object.freeze({ log: say('log'), info: say('info'), warn: say('warn'), error: say('error'), debug: say('debug') });
})();
`;
}

function errorText(error: unknown): { name: string; message: string; code?: string } {
  if (error instanceof Error)
    return { name: error.name, message: error.message, ...(UtcpError.isInstance(error) ? { code: error.code } : {}) };
  return { name: 'Error', message: String(error) };
}

/** A typed error from what the engine threw (`dumped` is the engine's error as plain data). */
function engineFailure(dumped: unknown, timedOut: boolean, aborted: boolean): CodeModeError {
  const d = (dumped && typeof dumped === 'object' ? dumped : { message: String(dumped) }) as {
    name?: string;
    message?: string;
    stack?: string;
  };
  const message = String(d.message ?? dumped);
  if (aborted) return new CodeModeError('ABORTED', 'The script was stopped by its signal');
  if (timedOut || message === 'interrupted')
    return new CodeModeError('TIMEOUT', 'The script ran past its deadline (timeoutMs) and was stopped');
  if (/out of memory/i.test(message) || dumped === null)
    return new CodeModeError('LIMIT_EXCEEDED', 'The script ran out of memory (memoryLimitMb) and was stopped');
  if (/stack overflow/i.test(message))
    return new CodeModeError('LIMIT_EXCEEDED', 'The script overflowed its stack (too deep recursion) and was stopped');
  if (d.name === 'SyntaxError')
    return new CodeModeError('INVALID_ARGUMENTS', `The script does not parse: SyntaxError: ${message}`);
  const stack = typeof d.stack === 'string' && d.stack ? `\n${d.stack.trim()}` : '';
  return new CodeModeError('TOOL_ERROR', `The script threw ${d.name ?? 'Error'}: ${message}${stack}`);
}

/**
 * Runs `code` (TypeScript or JavaScript; top-level `await` and `return`) with the client's tools as async functions
 * (`await manual.tool({ ... })`). Each call goes through `client.callTool` (validation, variables, deadlines) and
 * `callGate`; a failed call is an exception the script can catch. Fails with a `CodeModeError`.
 */
export async function runCode(
  client: Pick<UtcpClient, 'getTools' | 'callTool'>,
  code: string,
  options: RunCodeOptions = {},
): Promise<RunCodeResult> {
  if (typeof code !== 'string' || code.trim() === '')
    throw new CodeModeError('INVALID_ARGUMENTS', 'runCode: code must be a non-empty string');
  const timeoutMs = checkNumber('timeoutMs', options.timeoutMs, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  const memoryMb = checkNumber('memoryLimitMb', options.memoryLimitMb, DEFAULT_MEMORY_MB, MAX_MEMORY_MB);
  const maxCalls = checkNumber('maxCalls', options.maxCalls, 1000, 1_000_000);
  const maxLogChars = checkNumber('maxLogChars', options.maxLogChars, 100_000, 100_000_000);
  const outer = options.signal;
  if (outer?.aborted) throw new CodeModeError('ABORTED', 'The script was stopped by its signal');

  const tools = selectTools(await client.getTools(), options.tools);
  const byName = new Map(tools.map((t) => [t.name, t] as const));
  const js = await scriptToJavaScript(code, MAIN);
  const engine = await loadEngine();

  const deadline = Date.now() + timeoutMs;
  // The script's deadline (docs/design/code-mode.md#sandbox): `signal` aborts with the caller's signal, after
  // timeoutMs, or when the run ends, and cancels the tool calls still in flight.
  const stop = new AbortController();
  const unlinkOuter = outer ? onAbort(outer, (reason) => stop.abort(reason)) : undefined;
  const timed = withTimeout(stop.signal, timeoutMs, 'Code mode script');
  const controller = { signal: timed.signal };
  let wake: () => void = () => {};
  const unwake = onAbort(timed.signal, () => wake());

  const logs: string[] = [];
  let logChars = 0;
  const calls: CodeModeCall[] = [];
  const inflight = new Set<Promise<void>>();
  const deferreds = new Set<{ dispose(): void }>();
  let disposed = false;
  let failed = false;

  const runtime = engine.newRuntime();
  runtime.setMemoryLimit(Math.floor(memoryMb * 1024 * 1024));
  runtime.setMaxStackSize(STACK_BYTES);
  runtime.setInterruptHandler(() => controller.signal.aborted || Date.now() > deadline);
  const vm = runtime.newContext();

  const hostCall = async (name: string, argsJson: string): Promise<string> => {
    if (calls.length >= maxCalls) {
      const e = new CodeModeError('LIMIT_EXCEEDED', `The script made more than ${maxCalls} tool calls (maxCalls)`);
      return JSON.stringify({ ok: false, ...errorText(e) });
    }
    const started = performance.now();
    const record: CodeModeCall = { tool: name, ok: false, durationMs: 0 };
    calls.push(record);
    try {
      const tool = byName.get(name);
      if (!tool) throw new CodeModeError('TOOL_NOT_FOUND', `Tool ${name} is not available to this script`);
      const parsed = JSON.parse(argsJson) as unknown;
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
        throw new CodeModeError('INVALID_ARGUMENTS', `${name} takes one object argument`);
      let args = parsed as JsonObject;
      if (options.callGate) args = await options.callGate({ toolName: name, args }, { signal: controller.signal });
      const value = await client.callTool(name, args, {
        signal: controller.signal,
        timeoutMs: Math.max(1, deadline - Date.now()),
        ...(options.callGate ? { callGate: options.callGate } : {}),
      });
      record.ok = true;
      return JSON.stringify({ ok: true, value: value === undefined ? null : value });
    } catch (error) {
      const e = errorText(error);
      record.error = e.message;
      return JSON.stringify({ ok: false, ...e });
    } finally {
      record.durationMs = performance.now() - started;
    }
  };

  try {
    const callFn = vm.newFunction('__utcp_call', (nameHandle, argsHandle) => {
      const name = vm.getString(nameHandle);
      const argsJson = vm.getString(argsHandle);
      const deferred = vm.newPromise();
      deferreds.add(deferred);
      const settle = hostCall(name, argsJson).then((json) => {
        inflight.delete(settle);
        if (disposed) return;
        const h = vm.newString(json);
        deferred.resolve(h);
        h.dispose();
        deferred.dispose();
        deferreds.delete(deferred);
        wake();
      });
      inflight.add(settle);
      return deferred.handle;
    });
    vm.setProp(vm.global, '__utcp_call', callFn);
    callFn.dispose();
    const logFn = vm.newFunction('__utcp_log', (levelHandle, textHandle) => {
      const level = vm.getString(levelHandle);
      const text = vm.getString(textHandle);
      if (logChars >= maxLogChars) return;
      const line = level === 'log' ? text : `[${level}] ${text}`;
      logChars += line.length;
      logs.push(
        logChars > maxLogChars ? `${line.slice(0, line.length - (logChars - maxLogChars))}… [logs truncated]` : line,
      );
    });
    vm.setProp(vm.global, '__utcp_log', logFn);
    logFn.dispose();

    vm.unwrapResult(vm.evalCode(prelude(tools), 'prelude.js')).dispose();
    const started = vm.evalCode(
      `${js}\n${MAIN}().then((v) => v === undefined ? undefined : JSON.stringify(v));`,
      'script.js',
    );
    if (started.error) {
      const dumped = vm.dump(started.error);
      started.error.dispose();
      throw engineFailure(dumped, Date.now() > deadline, outer?.aborted === true);
    }
    const promise = started.value;
    try {
      for (;;) {
        const jobs = runtime.executePendingJobs();
        if (jobs.error) {
          const dumped = vm.dump(jobs.error);
          jobs.error.dispose();
          throw engineFailure(dumped, Date.now() > deadline, outer?.aborted === true);
        }
        const state = vm.getPromiseState(promise);
        if (state.type === 'fulfilled') {
          const text = vm.dump(state.value) as unknown;
          state.value.dispose();
          if (typeof text === 'string' && text.length > MAX_RESULT_CHARS)
            throw new CodeModeError('LIMIT_EXCEEDED', `The script's result exceeds ${MAX_RESULT_CHARS} characters`);
          return { result: typeof text === 'string' ? JSON.parse(text) : undefined, logs, calls };
        }
        if (state.type === 'rejected') {
          const dumped = vm.dump(state.error);
          state.error.dispose();
          throw engineFailure(dumped, Date.now() > deadline, outer?.aborted === true);
        }
        if (outer?.aborted) throw new CodeModeError('ABORTED', 'The script was stopped by its signal');
        if (Date.now() > deadline || controller.signal.aborted)
          throw new CodeModeError('TIMEOUT', 'The script ran past its deadline (timeoutMs) and was stopped');
        if (inflight.size === 0)
          throw new CodeModeError(
            'TOOL_ERROR',
            'The script waits for a promise that nothing will settle (there are no timers; only tool calls are asynchronous)',
          );
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      promise.dispose();
    }
  } catch (error) {
    failed = true;
    const typed =
      error instanceof CodeModeError
        ? error
        : error instanceof RangeError && /call stack/i.test(error.message)
          ? new CodeModeError('LIMIT_EXCEEDED', 'The script overflowed its stack (too deep recursion) and was stopped')
          : new CodeModeError('TOOL_ERROR', `The engine failed: ${errorText(error).message}`, { cause: error });
    typed.logs = logs;
    typed.calls = calls;
    throw typed;
  } finally {
    disposed = true;
    unlinkOuter?.();
    if (!stop.signal.aborted) stop.abort(new CodeModeError('ABORTED', 'The script ended'));
    unwake();
    timed.dispose();
    // The engine instance is this run's alone: a script stopped mid-way may leave objects the engine's own
    // teardown asserts on, so after a failure the instance is dropped whole, not torn down (docs/design/code-mode.md#sandbox).
    if (!failed) {
      try {
        for (const d of deferreds) d.dispose();
        vm.dispose();
        runtime.dispose();
      } catch {
        /* dropped with the instance */
      }
    }
  }
}
