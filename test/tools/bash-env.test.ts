/**
 * The environment of the code tools' `bash` comes from the library's one child-environment builder
 * (docs/design/code-tools.md#environment): the shared allowlist plus TMPDIR (without the sandbox only), never an
 * exported bash function. The cli transport's side: test/transports/cli-env.test.ts.
 */
import { tmpdir } from 'node:os';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { registerCodeTools } from '../../src/tools/index.js';
import { chooseSandbox } from '../../src/tools/sandbox.js';
import { codeWorkspace, tempDir } from './helpers.js';

const FUNCTION_NAME = 'BASH_FUNC_utcpprobe%%';
const saved: Record<string, string | undefined> = {};
const bwrapWorks = (await chooseSandbox('auto', process.cwd(), '/bin/bash')).mode === 'bwrap';
/** An existing directory, so every temp dir the test itself makes still works with it as TMPDIR. */
const HOST_TMP = tmpdir();
const PROBE = 'type utcpprobe >/dev/null 2>&1 && utcpprobe || echo none';

beforeEach(() => {
  for (const name of [FUNCTION_NAME, 'TMPDIR']) saved[name] = process.env[name];
  process.env[FUNCTION_NAME] = '() {  echo hijacked\n}';
  process.env.TMPDIR = HOST_TMP;
});

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('code.bash environment', () => {
  it('never passes an exported bash function, even when the allowlist names it', async () => {
    const { call } = await codeWorkspace({}, { shell: '/bin/bash', envAllowlist: ['PATH', FUNCTION_NAME] });
    expect(await call('bash', { command: PROBE })).toMatch(/^none\n\[exit code 0/);
  });

  it('refuses an exported bash function in the env option', async () => {
    const root = await tempDir('code-env-');
    const client = await UtcpClient.create({});
    try {
      await expect(
        registerCodeTools(client, {
          root,
          sandbox: 'none',
          dangerouslyRunUnsandboxed: true,
          env: { [FUNCTION_NAME]: '() {  echo hijacked\n}' },
        }),
      ).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('env.BASH_FUNC_') });
    } finally {
      await client.close();
    }
  });

  it('inherits the shared allowlist and TMPDIR without the sandbox', async () => {
    const { call } = await codeWorkspace({}, { shell: '/bin/bash' });
    expect(await call('bash', { command: 'echo "$TMPDIR|${PATH:+path}"' })).toMatch(
      new RegExp(`^${HOST_TMP}\\|path\\n\\[exit code 0`),
    );
  });

  it.runIf(bwrapWorks)('leaves TMPDIR out under the sandbox, whose /tmp is private', async () => {
    const { call } = await codeWorkspace({}, { shell: '/bin/bash', sandbox: 'bwrap' });
    expect(await call('bash', { command: 'echo "${TMPDIR:-unset}"; mktemp >/dev/null && echo writable' })).toMatch(
      /^unset\nwritable\n\[exit code 0/,
    );
  });
});
