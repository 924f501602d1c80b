/**
 * Where argument values may land in a cli template (docs/design/threat-model.md#cli-evaluating-contexts).
 *
 * Values reach the shell only as environment variables (rewrite-placeholders.ts), so plain command
 * arguments, strings and here-documents can never run them. But some shell constructs evaluate the TEXT
 * of a variable again: arithmetic (`$(( ))`, `(( ))`, `let`, `[[ a -gt b ]]`, array subscripts,
 * `${x:offset}`, `declare -i`) evaluates `a[$(cmd)]` and runs `cmd`; name-taking builtins (`printf -v`,
 * `read`, `declare`, `test -v`, `${!x}`) do the same with a name such as `a[$(cmd)]`; and `eval`,
 * `source`, `trap`, `${x@P}`, `bash -c`, `python -c`, `awk '…'`, `sed '…'`, a shell reading its program
 * from a pipe… run the text as code.
 *
 * This module reads the template (never a value) and reports, before anything runs:
 * - arguments that reach an arithmetic or name context, directly or through shell variables assigned
 *   from them (including `CMD_<i>_OUTPUT` of a step that used them, `read` targets and positional
 *   parameters): their value must then be a plain integer literal, which such contexts cannot misuse;
 * - arguments that reach a code context: the template is refused (no value is ever safe there).
 * A value routed through a file or another program and back into such a context is beyond what a
 * reading of the template can see; docs/design/threat-model.md says so.
 */
import { UtcpError } from '../../core/errors.js';
import { AnalysisState } from './analysis-state.js';
import type { ContextReport } from './analysis-state.js';
import { BashReader } from './bash-reader.js';
import { PLACEHOLDERS } from './bash-syntax.js';

export type { ContextReport } from './analysis-state.js';

/** Reads every step of a bash template; throws INVALID_MANUAL when an argument reaches a code context. */
export function checkBashContexts(commands: readonly string[]): ContextReport {
  const state = new AnalysisState();
  commands.forEach((command, step) => {
    state.step = step;
    new BashReader(command, state).readAll();
    // The next steps see this step's output as CMD_<i>_OUTPUT: it may hold any value this step used.
    state.assign(`CMD_${step}_OUTPUT`, new Set(state.stepRefs));
    state.stepRefs.clear();
  });
  return state.resolve();
}

// ------------------------------------------------------------------------------------ PowerShell

/** PowerShell constructs that run text as code, and the call operator on a value. */
const PS_CODE =
  /\b(?:Invoke-Expression|iex|Invoke-Command|icm|Start-Process|saps|Add-Type|New-Module|nmo|Invoke-Item|Set-Alias|New-Alias)\b|\[(?:System\.Management\.Automation\.)?ScriptBlock\]::Create|\.(?:ExpandString|InvokeScript|NewScriptBlock)\b|\$ExecutionContext|(?:^|[\s&(;|])(?:pwsh|powershell|cmd|bash|sh|wsl|start)(?:\.exe)?(?=\s|$)/i;

/** Reads a PowerShell template; throws INVALID_MANUAL when a placeholder shares a statement with a code-running construct. */
export function checkPowerShellContexts(commands: readonly string[]): ContextReport {
  commands.forEach((command, step) => {
    for (const statement of command.split(/[;\n|]/)) {
      const m = new RegExp(PLACEHOLDERS.source).exec(statement);
      if (!m) continue;
      const code = PS_CODE.exec(statement.replace(PLACEHOLDERS, ' '));
      if (code) {
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: commands[${step}]: the value of argument "${m[1]}" would be run as code by ${code[0]}; pass values only as plain arguments`,
        );
      }
      if (/^\s*[&.]\s*UTCP_ARG_/.test(statement) || /^\s*UTCP_ARG_/.test(statement)) {
        throw new UtcpError(
          'INVALID_MANUAL',
          `cli: commands[${step}]: the value of argument "${m[1]}" would choose the command to run`,
        );
      }
    }
  });
  return { integers: new Map() };
}
