/**
 * `runCode`: one script, one fresh QuickJS instance with no ambient authority, tools as async functions
 * (docs/design/code-mode.md#sandbox).
 */
import { Worker } from 'node:worker_threads';
import {
  UtcpError,
  onAbort,
  sleep,
  withTimeout,
  type CallGate,
  type JsonObject,
  type Tool,
  type UtcpClient,
} from '../index.js';
import { compiledEngine, engineMissing } from './engine.js';
import type { HostMessage, WorkerInput, WorkerMessage } from './code-mode-worker.js';
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
/** How long the host waits for a stopped engine to answer before it terminates the thread. */
const TERMINATE_GRACE_MS = 250;

/**
 * The worker's module: the compiled sibling in `dist/`; when this file runs from its TypeScript source (the tests
 * through vitest), the built copy in `dist/` (run `npm run build` first; docs/design/code-mode.md#worker).
 */
function workerUrl(): URL {
  return import.meta.url.endsWith('.ts')
    ? new URL('../../dist/code-mode/code-mode-worker.js', import.meta.url)
    : new URL('./code-mode-worker.js', import.meta.url);
}

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
  const wasmModule = await compiledEngine();

  const deadline = Date.now() + timeoutMs;
  // The script's deadline (docs/design/code-mode.md#sandbox): `signal` aborts with the caller's signal, after
  // timeoutMs, or when the run ends, and cancels the tool calls still in flight.
  const stop = new AbortController();
  const unlinkOuter = outer ? onAbort(outer, (reason) => stop.abort(reason)) : undefined;
  const timed = withTimeout(stop.signal, timeoutMs, 'Code mode script');
  const signal = timed.signal;

  const logs: string[] = [];
  let logChars = 0;
  const calls: CodeModeCall[] = [];

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
      if (options.callGate) args = await options.callGate({ toolName: name, args }, { signal });
      const value = await client.callTool(name, args, {
        signal,
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
  const addLog = (level: string, text: string): void => {
    if (logChars >= maxLogChars) return;
    const line = level === 'log' ? text : `[${level}] ${text}`;
    logChars += line.length;
    logs.push(
      logChars > maxLogChars ? `${line.slice(0, line.length - (logChars - maxLogChars))}… [logs truncated]` : line,
    );
  };

  const stopFlag = new SharedArrayBuffer(4);
  const input: WorkerInput = {
    js,
    main: MAIN,
    prelude: prelude(tools),
    memoryBytes: Math.floor(memoryMb * 1024 * 1024),
    stackBytes: STACK_BYTES,
    deadline,
    maxResultChars: MAX_RESULT_CHARS,
    maxLogChars,
    stopFlag,
    ...(wasmModule ? { wasmModule } : {}),
  };
  const stopped = (): CodeModeError =>
    outer?.aborted
      ? new CodeModeError('ABORTED', 'The script was stopped by its signal')
      : new CodeModeError('TIMEOUT', 'The script ran past its deadline (timeoutMs) and was stopped');
  let worker: Worker | undefined;
  const grace = new AbortController();
  let unlinkStop: (() => void) | undefined;
  try {
    const text = await new Promise<string | undefined>((resolve, reject) => {
      // One thread per run (docs/design/code-mode.md#worker): the engine never blocks the host's event loop, and
      // its second memory fence is the thread's own heap limit.
      const w = new Worker(workerUrl(), {
        workerData: input,
        resourceLimits: { maxOldGenerationSizeMb: Math.ceil(48 + 2 * memoryMb) },
        stdout: true,
        stderr: true,
      });
      worker = w;
      w.on('message', (m: WorkerMessage) => {
        switch (m.t) {
          case 'call':
            void hostCall(m.name, m.args).then((json) => {
              if (!signal.aborted) w.postMessage({ t: 'result', id: m.id, json } satisfies HostMessage);
            });
            return;
          case 'log':
            return addLog(m.level, m.text);
          case 'done':
            return resolve(m.text);
          case 'missing':
            return reject(engineMissing(m.message));
          case 'engine-error':
            return reject(engineFailure(m.dumped, Date.now() > deadline || signal.aborted, outer?.aborted === true));
          case 'fail':
            if (m.code === 'TIMEOUT' || signal.aborted) return reject(stopped());
            if (m.code === 'LIMIT_EXCEEDED') return reject(new CodeModeError('LIMIT_EXCEEDED', m.message));
            if (m.code === 'STALLED')
              return reject(
                new CodeModeError(
                  'TOOL_ERROR',
                  'The script waits for a promise that nothing will settle (there are no timers; only tool calls are asynchronous)',
                ),
              );
            if (/RangeError: .*call stack/i.test(m.message))
              return reject(
                new CodeModeError(
                  'LIMIT_EXCEEDED',
                  'The script overflowed its stack (too deep recursion) and was stopped',
                ),
              );
            return reject(new CodeModeError('TOOL_ERROR', `The engine failed: ${m.message}`));
        }
      });
      w.on('error', (error: Error & { code?: string }) => {
        if (error.code === 'ERR_WORKER_OUT_OF_MEMORY')
          reject(new CodeModeError('LIMIT_EXCEEDED', 'The script ran out of memory (memoryLimitMb) and was stopped'));
        else reject(new CodeModeError('TOOL_ERROR', `The engine failed: ${error.message}`, { cause: error }));
      });
      w.on('exit', () => {
        reject(signal.aborted ? stopped() : new CodeModeError('TOOL_ERROR', 'The engine stopped unexpectedly'));
      });
      // The termination fence (docs/design/code-mode.md#worker): the engine's interrupt handler sees the stop flag
      // at once; if the engine still has not answered a short grace later, the thread is terminated.
      unlinkStop = onAbort(signal, () => {
        Atomics.store(new Int32Array(stopFlag), 0, 1);
        w.postMessage({ t: 'stop' } satisfies HostMessage);
        sleep(TERMINATE_GRACE_MS, grace.signal).then(
          () => reject(stopped()),
          () => {},
        );
      });
    });
    if (text !== undefined && text.length > MAX_RESULT_CHARS)
      throw new CodeModeError('LIMIT_EXCEEDED', `The script's result exceeds ${MAX_RESULT_CHARS} characters`);
    return { result: text === undefined ? undefined : JSON.parse(text), logs, calls };
  } catch (error) {
    const typed =
      error instanceof CodeModeError
        ? error
        : new CodeModeError('TOOL_ERROR', `The engine failed: ${errorText(error).message}`, { cause: error });
    typed.logs = logs;
    typed.calls = calls;
    throw typed;
  } finally {
    unlinkStop?.();
    grace.abort();
    Atomics.store(new Int32Array(stopFlag), 0, 1);
    unlinkOuter?.();
    if (!stop.signal.aborted) stop.abort(new CodeModeError('ABORTED', 'The script ended'));
    timed.dispose();
    // The engine instance dies with its thread: never torn down, never reused (docs/design/code-mode.md#worker).
    // Not awaited: the thread is done or stopped, and an unref'd thread never holds the process open.
    worker?.unref();
    void worker?.terminate();
  }
}
