/**
 * The sandbox engine, QuickJS compiled to WebAssembly, is an optional peer dependency that only users of code mode
 * install; the run's worker thread loads it (docs/design/code-mode.md#engine).
 */
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
