/**
 * The worker thread of one `runCode` run: loads the engine, evaluates the prelude and the script, and runs the
 * script's jobs; tool calls and console output cross to the host thread as messages
 * (docs/design/code-mode.md#worker). Self-contained on purpose: it imports Node built-ins, the engine and the
 * import-free core/guards.ts only, so the worker starts without loading the library.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../core/guards.js';

/** What the host passes in `workerData`. */
export interface WorkerInput {
  /** The script as JavaScript: a function declaration named `main`. */
  js: string;
  main: string;
  prelude: string;
  memoryBytes: number;
  stackBytes: number;
  /** `Date.now()` time after which the engine's interrupt handler stops the script. */
  deadline: number;
  maxResultChars: number;
  maxLogChars: number;
  /** One Int32: the host stores 1 when the run must stop (deadline, signal, end). */
  stopFlag: SharedArrayBuffer;
  /** The engine's code compiled by the host, shared by every run; absent when the host could not compile it. */
  wasmModule?: WebAssembly.Module;
}

/** Messages from the worker to the host. */
export type WorkerMessage =
  | { t: 'call'; id: number; name: string; args: string }
  | { t: 'log'; level: string; text: string }
  | { t: 'done'; text: string | undefined }
  | { t: 'missing'; message: string }
  /** `dumped`: what the engine threw, as plain data. */
  | { t: 'engine-error'; dumped: unknown }
  /** A limit or state the worker detected itself. */
  | { t: 'fail'; code: 'TIMEOUT' | 'LIMIT_EXCEEDED' | 'STALLED' | 'HOST'; message: string };

/** Messages from the host to the worker: a tool call's JSON outcome, or a wake-up to see the stop flag. */
export type HostMessage = { t: 'result'; id: number; json: string } | { t: 'stop' };

if (!parentPort) throw new Error('code-mode-worker runs as a worker thread only');
const port = parentPort;
const input = workerData as WorkerInput;
const stop = new Int32Array(input.stopFlag);
const post = (message: WorkerMessage): void => port.postMessage(message);

async function loadEngine() {
  const core = await import('quickjs-emscripten-core');
  const variant: unknown = (await import('@jitl/quickjs-wasmfile-release-sync')).default;
  type Variant = import('quickjs-emscripten-core').QuickJSSyncVariant;
  // The engine's own diagnostics must not reach the console: the library prints nothing
  // (docs/design/code-mode.md#engine).
  const quiet = core.newVariant(variant as Variant, {
    emscriptenModule: { print: () => {}, printErr: () => {} } as Record<string, unknown>,
    ...(input.wasmModule ? { wasmModule: input.wasmModule } : {}),
  });
  return core.newQuickJSWASMModuleFromVariant(quiet as Variant);
}

async function run(): Promise<void> {
  let engine: Awaited<ReturnType<typeof loadEngine>>;
  try {
    engine = await loadEngine();
  } catch (error) {
    post({ t: 'missing', message: errorMessage(error) });
    return;
  }
  const stopped = () => Atomics.load(stop, 0) !== 0 || Date.now() > input.deadline;
  const runtime = engine.newRuntime();
  runtime.setMemoryLimit(input.memoryBytes);
  runtime.setMaxStackSize(input.stackBytes);
  runtime.setInterruptHandler(stopped);
  const vm = runtime.newContext();

  let wake: () => void = () => {};
  let nextId = 0;
  const pending = new Map<number, ReturnType<typeof vm.newPromise>>();
  port.on('message', (message: HostMessage) => {
    if (message.t === 'stop') return wake();
    const deferred = pending.get(message.id);
    if (!deferred) return;
    pending.delete(message.id);
    const h = vm.newString(message.json);
    deferred.resolve(h);
    h.dispose();
    deferred.dispose();
    wake();
  });

  const callFn = vm.newFunction('__utcp_call', (nameHandle, argsHandle) => {
    const id = nextId++;
    const deferred = vm.newPromise();
    pending.set(id, deferred);
    post({ t: 'call', id, name: vm.getString(nameHandle), args: vm.getString(argsHandle) });
    return deferred.handle;
  });
  vm.setProp(vm.global, '__utcp_call', callFn);
  callFn.dispose();
  let logChars = 0;
  const logFn = vm.newFunction('__utcp_log', (levelHandle, textHandle) => {
    // The host keeps the exact budget; this only stops a flood of messages past it.
    if (logChars > input.maxLogChars) return;
    const text = vm.getString(textHandle);
    logChars += text.length;
    post({ t: 'log', level: vm.getString(levelHandle), text });
  });
  vm.setProp(vm.global, '__utcp_log', logFn);
  logFn.dispose();

  // The deadline may pass while the engine loads: the interrupt handler then stops the prelude already.
  const prepared = vm.evalCode(input.prelude, 'prelude.js');
  if (prepared.error) {
    post({ t: 'engine-error', dumped: vm.dump(prepared.error) });
    return;
  }
  prepared.value.dispose();
  const started = vm.evalCode(
    `${input.js}\n${input.main}().then((v) => v === undefined ? undefined : JSON.stringify(v));`,
    'script.js',
  );
  if (started.error) {
    post({ t: 'engine-error', dumped: vm.dump(started.error) });
    return;
  }
  const promise = started.value;
  for (;;) {
    const jobs = runtime.executePendingJobs();
    if (jobs.error) {
      post({ t: 'engine-error', dumped: vm.dump(jobs.error) });
      return;
    }
    const state = vm.getPromiseState(promise);
    if (state.type === 'fulfilled') {
      const text = vm.dump(state.value) as unknown;
      if (typeof text === 'string' && text.length > input.maxResultChars) {
        post({
          t: 'fail',
          code: 'LIMIT_EXCEEDED',
          message: `The script's result exceeds ${input.maxResultChars} characters`,
        });
        return;
      }
      post({ t: 'done', text: typeof text === 'string' ? text : undefined });
      return;
    }
    if (state.type === 'rejected') {
      post({ t: 'engine-error', dumped: vm.dump(state.error) });
      return;
    }
    if (stopped()) {
      post({ t: 'fail', code: 'TIMEOUT', message: 'stopped' });
      return;
    }
    if (pending.size === 0) {
      post({ t: 'fail', code: 'STALLED', message: 'no pending tool call' });
      return;
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
}

// The instance is never torn down: the host terminates the whole thread when the run ends
// (docs/design/code-mode.md#worker).
run().catch((error: unknown) => {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  post({ t: 'fail', code: 'HOST', message });
});
