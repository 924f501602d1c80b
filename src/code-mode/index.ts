/**
 * utcp-kit/code-mode: the model writes one script that calls many tools, run in a QuickJS sandbox with no ambient
 * authority (docs/design/code-mode.md). The engine is an optional peer dependency:
 * `npm install quickjs-emscripten-core @jitl/quickjs-wasmfile-release-sync`.
 */
import type { UtcpClient } from '../index.js';
import { runCode, type RunCodeResult } from './run-code.js';

export { runCode, type RunCodeOptions, type RunCodeResult } from './run-code.js';
export { toolsAsTypeScript, toolToTypeScriptInterface } from './declarations.js';
export { registerCodeMode, type CodeModeOptions } from './register.js';
export { CodeModeError, type CodeModeCall } from './code-mode-error.js';
export type { CodeToolSelection } from './script-names.js';

/**
 * `runCode` under the official `@utcp/code-mode` name and argument order (`callToolChain(code, timeout)` there):
 * the script's result and console output, plus the calls it made.
 */
export function callToolChain(
  client: Pick<UtcpClient, 'getTools' | 'callTool'>,
  code: string,
  timeoutMs = 30_000,
): Promise<RunCodeResult> {
  return runCode(client, code, { timeoutMs });
}
