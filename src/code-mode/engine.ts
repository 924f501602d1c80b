/**
 * The sandbox engine, QuickJS compiled to WebAssembly, is an optional peer dependency that only users of code mode
 * install; the run's worker thread loads it (docs/design/code-mode.md#engine).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { CodeModeError } from './code-mode-error.js';

/** The engine's packages, as the install hint names them. */
export const ENGINE_PACKAGES = ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync'] as const;

/** The typed error for an engine that does not load in the worker (`detail`: the loader's message). */
export function engineMissing(detail: string): CodeModeError {
  return new CodeModeError(
    'DEPENDENCY_MISSING',
    `Code mode needs its sandbox engine: npm install ${ENGINE_PACKAGES.join(' ')} (${detail})`,
  );
}

let compiled: Promise<WebAssembly.Module | undefined> | undefined;

/**
 * The engine's WebAssembly code, compiled once per process and handed to each run's worker
 * (docs/design/code-mode.md#worker). A compiled module is immutable code, not state: every run still instantiates
 * its own memory. Sharing it lets V8 share the optimised (tiered-up) machine code too; without it each new worker
 * re-optimised the engine and its first tool call waited ~65 ms. Undefined when the engine is not installed (the
 * worker then reports DEPENDENCY_MISSING).
 */
export function compiledEngine(): Promise<WebAssembly.Module | undefined> {
  compiled ??= (async () => {
    try {
      const path = createRequire(import.meta.url).resolve(`${ENGINE_PACKAGES[1]}/wasm`);
      return await WebAssembly.compile(await readFile(path));
    } catch {
      compiled = undefined;
      return undefined;
    }
  })();
  return compiled;
}
