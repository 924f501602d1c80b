import { tmpdir } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChildEnv, DEFAULT_UNIX_ALLOWLIST, DEFAULT_WINDOWS_ALLOWLIST } from '../../src/process/child-env.js';
import type { CliCallTemplate } from '../../src/index.js';
import { cliTemplate, makeHarness, nodeFixture } from '../fixtures/cli/harness.js';

const SECRETS = {
  OPENAI_API_KEY: 'sk-test-openai',
  ANTHROPIC_API_KEY: 'sk-test-anthropic',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  AWS_ACCESS_KEY_ID: 'AKIATEST',
  AZURE_CLIENT_SECRET: 'azure-secret',
  GITHUB_TOKEN: 'ghp_test',
  DATABASE_URL: 'postgres://u:p@db/x',
  SLACK_TOKEN: 'xoxb-test',
};
const PROBE = 'UTCP_TEST_LEAK_PROBE';
const saved: Record<string, string | undefined> = {};

beforeAll(() => {
  for (const [k, v] of Object.entries({ ...SECRETS, [PROBE]: 'leaked', UTCP_TEST_SET_VAR: 'set-value' })) {
    saved[k] = process.env[k];
    process.env[k] = v;
  }
  delete process.env.UTCP_TEST_UNSET_VAR;
});

afterAll(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** The child's environment, as printed by a node fixture started by absolute path (no PATH needed). */
async function childEnv(extra: Partial<CliCallTemplate> = {}): Promise<Record<string, string>> {
  const h = makeHarness();
  return (await h.call(cliTemplate(nodeFixture('print-env.mjs'), extra))) as Record<string, string>;
}

/** Variables bash itself sets in every shell. */
const BASH_OWN = new Set(['PWD', 'SHLVL', '_', 'OLDPWD']);

function hostNames(env: Record<string, string>): string[] {
  return Object.keys(env)
    .filter((k) => !k.startsWith('__UTCP_') && !BASH_OWN.has(k))
    .sort();
}

describe('cli child environment', () => {
  it('does not pass host secrets to the child', async () => {
    const env = await childEnv();
    for (const name of Object.keys(SECRETS)) expect(env).not.toHaveProperty(name);
    expect(JSON.stringify(env)).not.toContain('sk-test');
  });

  it('prints MISSING for an unlisted variable', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(`echo "\${${PROBE}:-MISSING}"`))).toBe('MISSING');
  });

  it('passes a variable listed in inherit_env_vars', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(`echo "\${${PROBE}:-MISSING}"`, { inherit_env_vars: [PROBE] }))).toBe('leaked');
  });

  it('inherits PATH and HOME by default', async () => {
    const env = await childEnv();
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.HOME).toBe(process.env.HOME);
  });

  it('inherits only allowlisted host variables by default (null behaves the same)', async () => {
    const byDefault = hostNames(await childEnv());
    const withNull = hostNames(await childEnv({ inherit_env_vars: null }));
    const expected = DEFAULT_UNIX_ALLOWLIST.filter((k) => process.env[k] !== undefined).sort();
    expect(byDefault).toEqual(expected);
    expect(withNull).toEqual(expected);
  });

  it('adds env_vars and lets them override inherited values', async () => {
    const env = await childEnv({ env_vars: { HOME: '/override/home', EXTRA: 'x y' } });
    expect(env.HOME).toBe('/override/home');
    expect(env.EXTRA).toBe('x y');
    expect(env.PATH).toBe(process.env.PATH);
  });

  it('passes named inherit_env_vars and skips unset ones', async () => {
    const env = await childEnv({ inherit_env_vars: ['UTCP_TEST_SET_VAR', 'UTCP_TEST_UNSET_VAR'] });
    expect(env.UTCP_TEST_SET_VAR).toBe('set-value');
    expect(env).not.toHaveProperty('UTCP_TEST_UNSET_VAR');
  });

  it('replaces the allowlist with a named list', async () => {
    const env = await childEnv({ inherit_env_vars: ['UTCP_TEST_SET_VAR'] });
    expect(hostNames(env)).toEqual(['UTCP_TEST_SET_VAR']);
  });

  it('inherits nothing with [] (strict)', async () => {
    expect(hostNames(await childEnv({ inherit_env_vars: [] }))).toEqual([]);
  });

  it('inherits nothing with [] but still sets env_vars', async () => {
    expect(hostNames(await childEnv({ inherit_env_vars: [], env_vars: { ONLY: '1' } }))).toEqual(['ONLY']);
  });

  it('treats duplicate names as one', async () => {
    const env = await childEnv({ inherit_env_vars: ['UTCP_TEST_SET_VAR', 'UTCP_TEST_SET_VAR'] });
    expect(hostNames(env)).toEqual(['UTCP_TEST_SET_VAR']);
  });

  it('behaves the same for null, [] and a list after a JSON round trip', async () => {
    for (const inherit of [null, [], ['UTCP_TEST_SET_VAR']]) {
      const template = cliTemplate(nodeFixture('print-env.mjs'), { inherit_env_vars: inherit });
      const h = makeHarness();
      const direct = hostNames((await h.call(template)) as Record<string, string>);
      const roundTripped = hostNames((await h.call(JSON.parse(JSON.stringify(template)))) as Record<string, string>);
      expect(roundTripped).toEqual(direct);
    }
  });

  it('sets argument variables after env_vars, so env_vars cannot shadow them', async () => {
    const h = makeHarness();
    const result = await h.call(
      cliTemplate(`${nodeFixture('echo-args.mjs')} UTCP_ARG_x_UTCP_END`, { env_vars: { x: 'from-env' } }),
      { x: 'from-arg' },
    );
    expect(result).toEqual(['from-arg']);
  });
});

describe('buildChildEnv', () => {
  it('uses the Windows allowlist on win32', () => {
    const env = buildChildEnv({
      hostEnv: { SYSTEMROOT: 'C:\\Windows', PATHEXT: '.EXE', HOME: '/h', OPENAI_API_KEY: 'k' },
      inherit: null,
      envVars: null,
      internal: {},
      platform: 'win32',
    });
    expect(env).toEqual({ SYSTEMROOT: 'C:\\Windows', PATHEXT: '.EXE' });
    expect(DEFAULT_WINDOWS_ALLOWLIST).toContain('PROGRAMFILES(X86)');
  });

  it('rejects env_vars names with "=" and values with NUL', () => {
    const base = { hostEnv: {}, inherit: [], internal: {}, platform: 'linux' as const };
    expect(() => buildChildEnv({ ...base, envVars: { 'A=B': 'x' } })).toThrow(/invalid environment variable name/);
    expect(() => buildChildEnv({ ...base, envVars: { A: 'x\0y' } })).toThrow(/NUL/);
  });

  // docs/design/security.md#child-env: bash turns a `BASH_FUNC_<name>%%` variable into a function that can
  // shadow any command, so no exported function reaches a child, inherited or set by a manual.
  it('never passes an exported bash function to the child', async () => {
    const name = 'BASH_FUNC_utcpprobe%%';
    const before = process.env[name];
    process.env[name] = '() {  echo hijacked\n}';
    try {
      const h = makeHarness();
      const probe = 'type utcpprobe >/dev/null 2>&1 && utcpprobe || echo none';
      expect(await h.call(cliTemplate(probe, { inherit_env_vars: [name, 'PATH'] }))).toBe('none');
      await expect(
        h.call(cliTemplate(probe, { env_vars: { [name]: '() {  echo hijacked\n}' } })),
      ).rejects.toMatchObject({
        code: 'INVALID_MANUAL',
        message: expect.stringContaining('bash function'),
      });
      expect(() =>
        buildChildEnv({
          hostEnv: { [name]: 'x', BASH_FUNC_b: 'y' },
          inherit: [name, 'BASH_FUNC_b'],
          platform: 'linux',
        }),
      ).not.toThrow();
      expect(buildChildEnv({ hostEnv: { [name]: 'x' }, inherit: [name], platform: 'linux' })).toEqual({});
    } finally {
      if (before === undefined) delete process.env[name];
      else process.env[name] = before;
    }
  });

  it("does not inherit TMPDIR by default (the code tools' bash does: test/tools/bash-env.test.ts)", async () => {
    const before = process.env.TMPDIR;
    process.env.TMPDIR = tmpdir(); // an existing directory: the transport makes its own temp dirs there
    try {
      expect(await childEnv()).not.toHaveProperty('TMPDIR');
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
  });
});
