/**
 * TypeScript in, JavaScript out: the engine runs JavaScript only (docs/design/code-mode.md#typescript). Code that
 * parses as JavaScript runs as written; else `typescript` when installed, else Node's own stripper where it
 * exists (22.13+); without either, the code runs as written (and the engine reports the syntax error).
 */
import { errorMessage } from '../core/guards.js';
import { Script } from 'node:vm';
import { CodeModeError } from './code-mode-error.js';

type Stripper = (code: string) => string;

/**
 * True when `source` already parses as JavaScript: V8 compiles it (`vm.Script` parses, it never runs here), so
 * plain JavaScript skips the stripper, whose first load costs seconds for `typescript`
 * (docs/design/code-mode.md#typescript).
 */
function isJavaScript(source: string): boolean {
  try {
    new Script(source);
    return true;
  } catch {
    return false;
  }
}

async function nodeStripper(): Promise<Stripper | undefined> {
  const mod = (await import('node:module')) as { stripTypeScriptTypes?: (code: string, options?: object) => string };
  const strip = mod.stripTypeScriptTypes;
  return strip ? (code) => strip(code, { mode: 'strip' }) : undefined;
}

async function typescriptStripper(): Promise<Stripper | undefined> {
  let ts: typeof import('typescript');
  try {
    ts =
      ((await import('typescript')) as { default?: typeof import('typescript') }).default ??
      (await import('typescript'));
  } catch {
    return undefined;
  }
  return (code) => {
    // transpileModule repairs broken syntax silently; its (syntactic) diagnostics say when it had to.
    const out = ts.transpileModule(code, {
      reportDiagnostics: true,
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, sourceMap: false },
    });
    const first = out.diagnostics?.find((d) => d.category === ts.DiagnosticCategory.Error);
    if (first) {
      const where =
        first.file && first.start !== undefined ? first.file.getLineAndCharacterOfPosition(first.start) : undefined;
      const line = where ? ` (line ${where.line}, column ${where.character + 1})` : '';
      throw new SyntaxError(`${ts.flattenDiagnosticMessageText(first.messageText, ' ')}${line}`);
    }
    return out.outputText;
  };
}

/**
 * The script as a JavaScript function body: `code` is wrapped as the body of `async function name()` first (so
 * top-level `return` and `await` parse), then its types are removed.
 */
export async function scriptToJavaScript(code: string, name: string): Promise<string> {
  const wrapped = `async function ${name}() {\n${code}\n}\n`;
  if (isJavaScript(wrapped)) return wrapped;
  // typescript first: Node's stripper is marked experimental on some versions and Node prints a warning for it.
  const strippers = [typescriptStripper, nodeStripper];
  let lastError: unknown;
  for (const load of strippers) {
    const strip = await load();
    if (!strip) continue;
    try {
      return strip(wrapped);
    } catch (error) {
      lastError = error;
    }
  }
  if (lastError !== undefined)
    throw new CodeModeError('INVALID_ARGUMENTS', `The script does not parse: ${errorMessage(lastError)}`, {
      cause: lastError,
    });
  return wrapped;
}
