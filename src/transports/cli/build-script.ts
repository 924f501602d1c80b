/**
 * The one script that runs every step of a CLI call in a single shell (docs/design/transports.md#cli),
 * so that `cd`, `export` and shell variables persist from step to step.
 */

/** Environment variable naming the private output directory of one bash invocation. */
export function outDirEnvName(nonce: string): string {
  return `__UTCP_OUT_${nonce}`;
}

/** Environment variable holding the random token of the step markers of one bash invocation. */
export function markEnvName(nonce: string): string {
  return `__UTCP_MARK_${nonce}`;
}

/**
 * Bash: each step in a `{ … }` group (the current shell, not a subshell) whose combined output goes to the
 * shell's stdout, which the transport reads and caps while it streams (docs/design/threat-model.md#cli-output-cap).
 * After each step the shell prints a marker line (`\n<token>:<i>\n`) and waits for the transport's
 * acknowledgement on fd 3 (a pipe from the transport; fd 4 keeps the original stdout); by then the transport has written the step's output to
 * `$__UTCP_OUT_<nonce>/<i>`, from which `CMD_<i>_OUTPUT` is read. Steps get neither fd 3 nor fd 4. The last step
 * only prints its marker: no step follows that could read its output, so a one-step call needs neither the
 * directory nor fd 3 (docs/design/transports.md#cli-fast-path).
 * An EXIT trap prints `\n<token>:end\n`, also when a step calls `exit`. The script exits with the last step's status.
 * `commands` are already rewritten (no placeholders left). `asInit`: the shell runs as its PID namespace's init, which
 * ignores a signal it has no handler for, so SIGTERM gets one that exits as a shell killed by it would (143;
 * docs/design/transports.md#cli-fast-path).
 */
export function buildBashScript(commands: readonly string[], nonce: string, asInit = false): string {
  const dir = `$${outDirEnvName(nonce)}`;
  const mark = `$${markEnvName(nonce)}`;
  const lines: string[] = ['exec 4>&1', `trap 'printf "\\n%s:end\\n" "${mark}" >&4' EXIT`];
  if (asInit) lines.push("trap 'exit 143' TERM");
  commands.forEach((command, i) => {
    // The group's own redirection of fd 1 means an `exec >file` inside it ends with the group.
    lines.push('{', command, '} >&4 2>&1 3<&- 4>&-');
    if (i === commands.length - 1) {
      lines.push('__utcp_rc=$?', `printf '\\n%s:${i}\\n' "${mark}" >&4`);
      return;
    }
    lines.push(
      `printf '\\n%s:${i}\\n' "${mark}" >&4`,
      'IFS= read -r __utcp_ack <&3 || exit 125',
      `CMD_${i}_OUTPUT=$(<"${dir}/${i}")`,
    );
  });
  lines.push('exit $__utcp_rc');
  return lines.join('\n') + '\n';
}

/**
 * PowerShell (Windows): each step dot-sourced in the script scope (so variables and locations persist),
 * its output captured as `$CMD_<i>_OUTPUT`; the appended outputs are written to stdout with `Write-Output`,
 * each without trailing line breaks and joined with "\n"; the script exits with the last native exit code.
 */
export function buildPowerShellScript(commands: readonly string[], appended: readonly boolean[]): string {
  const lines: string[] = [
    '$ErrorActionPreference = "Stop"',
    '[Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)',
  ];
  commands.forEach((command, i) => {
    lines.push('$global:LASTEXITCODE = 0', `$CMD_${i}_OUTPUT = . {`, command, '} 2>&1 | Out-String');
  });
  lines.push('$__utcp_rc = $LASTEXITCODE');
  const outputs = commands.map((_, i) => `$CMD_${i}_OUTPUT`).filter((_, i) => appended[i]);
  if (outputs.length > 0) {
    lines.push(
      `Write-Output ((@(${outputs.join(', ')}) | ForEach-Object { ([string]$_).TrimEnd("\`r", "\`n") }) -join "\`n")`,
    );
  }
  lines.push('exit $__utcp_rc');
  return lines.join('\n') + '\n';
}
