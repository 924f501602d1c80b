/**
 * Loads the sandbox engine, QuickJS compiled to WebAssembly, on first use: an optional peer dependency that only
 * users of code mode install (docs/design/code-mode.md#engine).
 */
import { CodeModeError } from './code-mode-error.js';

/** The engine's packages, as the install hint names them. */
export const ENGINE_PACKAGES = ['quickjs-emscripten-core', '@jitl/quickjs-wasmfile-release-sync'] as const;

/** The part of `quickjs-emscripten-core`'s module this folder uses. */
export type QuickJsModule = Awaited<
  ReturnType<typeof import('quickjs-emscripten-core').newQuickJSWASMModuleFromVariant>
>;

function missing(cause: unknown): CodeModeError {
  return new CodeModeError(
    'DEPENDENCY_MISSING',
    `Code mode needs its sandbox engine: npm install ${ENGINE_PACKAGES.join(' ')}`,
    { cause },
  );
}

/**
 * A fresh WebAssembly instance of the engine. Each run gets its own instance, so nothing (heap, atoms, memory
 * growth) outlives the run or is shared between runs and clients.
 */
export async function loadEngine(): Promise<QuickJsModule> {
  let core: typeof import('quickjs-emscripten-core');
  let variant: unknown;
  try {
    core = await import('quickjs-emscripten-core');
    variant = (await import('@jitl/quickjs-wasmfile-release-sync')).default;
  } catch (error) {
    throw missing(error);
  }
  type Variant = import('quickjs-emscripten-core').QuickJSSyncVariant;
  // The engine's own diagnostics (e.g. an assertion while dropping a stopped script) must not reach the console:
  // the library prints nothing (docs/design/code-mode.md#engine).
  const quiet = core.newVariant(variant as Variant, {
    emscriptenModule: { print: () => {}, printErr: () => {} } as Record<string, unknown>,
  });
  return core.newQuickJSWASMModuleFromVariant(quiet as Variant);
}
