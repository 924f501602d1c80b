import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliExitError, UtcpError } from '../../src/core/errors.js';
import { createTestContext } from '../helpers/context.js';
import { createCliTransport } from '../../src/transports/cli/index.js';
import { cliTemplate, makeHarness, nodeFixture, tempDir, caught } from '../fixtures/cli/harness.js';

describe('cli calls: results', () => {
  it('returns the trimmed text output of the last step', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('echo "  hello world  "'))).toBe('hello world');
  });

  it('parses output that starts with { or [ as JSON', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(`echo '{"a": [1, 2]}'`))).toEqual({ a: [1, 2] });
    expect(await h.call(cliTemplate(`echo '[true, null]'`))).toEqual([true, null]);
  });

  it('returns text when the output starts with { but is not JSON', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(`echo '{not json}'`))).toBe('{not json}');
  });

  it('does not parse numbers or quoted strings as JSON', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('echo 42'))).toBe('42');
    expect(await h.call(cliTemplate(`echo '"x"'`))).toBe('"x"');
  });

  it('returns "" for empty output', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('true'))).toBe('');
  });

  it('returns the whole output of a last step that replaced the shell with exec (no end marker follows)', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(`exec printf 'hello world'`))).toBe('hello world');
    expect(await h.call(cliTemplate(['echo first', `exec printf 'second'`]))).toBe('second');
    const error = await caught(h.call(cliTemplate(`exec sh -c 'printf partial; exit 3'`)));
    expect(error).toBeInstanceOf(CliExitError);
    expect((error as Error).message).toContain('partial');
  });

  it('includes stderr in a step output', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('echo out; echo err >&2'))).toBe('out\nerr');
  });

  it('appends only the last step by default', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(['echo first', 'echo second']))).toBe('second');
  });

  it('never makes up the output of a step that did not run: a step that exits 0 early fails the call', async () => {
    const h = makeHarness();
    const error = await caught(h.call(cliTemplate(['echo first; exit 0', 'echo second'])));
    expect(error).toMatchObject({ code: 'TRANSPORT_FAILED' });
    expect((error as Error).message).toMatch(/step 1 of 2 ended the shell with status 0 before step 2 ran/);
    // Steps before the early exit still return what they printed.
    expect(await h.call(cliTemplate([{ command: 'echo first', append_to_final_output: true }, 'exit 0']))).toBe(
      'first',
    );
  });

  it('joins the appended steps with newlines, honouring append_to_final_output', async () => {
    const h = makeHarness();
    const template = cliTemplate([
      { command: 'echo one', append_to_final_output: true },
      { command: 'echo two', append_to_final_output: false },
      { command: 'printf "three\\n\\n"', append_to_final_output: true },
      { command: 'echo four', append_to_final_output: null },
    ]);
    expect(await h.call(template)).toBe('one\nthree\nfour');
  });

  it('returns an empty result when no step is appended', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate([{ command: 'echo hidden', append_to_final_output: false }]))).toBe('');
  });

  it('runs a multi-line command and one with # comments and unbalanced parentheses', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('for i in 1 2; do\n  echo "n$i"\ndone # ) trailing ( comment'))).toBe('n1\nn2');
  });

  it('returns a large output intact', async () => {
    const h = makeHarness();
    const out = (await h.call(cliTemplate('head -c 300000 /dev/zero | tr "\\0" a'))) as string;
    expect(out.length).toBe(300000);
  });

  it('rejects an output larger than max_response_bytes', async () => {
    const h = makeHarness({ limits: { max_response_bytes: 1000 } });
    await expect(h.call(cliTemplate('head -c 5000 /dev/zero | tr "\\0" a'))).rejects.toMatchObject({
      code: 'RESPONSE_TOO_LARGE',
    });
  });

  it('closes stdin, so a program reading it does not hang', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('cat; echo after'))).toBe('after');
  });

  it('streams exactly one item equal to the call result', async () => {
    const h = makeHarness();
    const template = cliTemplate(`echo '{"n": 1}'`);
    const items: unknown[] = [];
    const tool = { name: 'demo.t', description: '', inputs: {}, outputs: {}, tags: [], tool_call_template: template };
    for await (const item of h.transport.callToolStream(tool, {}, template, {
      signal: new AbortController().signal,
      manualName: 'demo',
      rawTemplate: template,
    })) {
      items.push(item);
    }
    expect(items).toEqual([{ n: 1 }]);
  });
});

describe('cli calls: one shell for all steps', () => {
  it('keeps cd and export across steps', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'sub'));
    const h = makeHarness({ rootDir: dir });
    expect(await h.call(cliTemplate(['cd sub && export GREETING=hi', 'echo "$GREETING $(basename "$PWD")"']))).toBe(
      'hi sub',
    );
  });

  it('keeps plain shell variables across steps', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(['x=41', 'echo $((x + 1))']))).toBe('42');
  });

  it('exposes earlier outputs as $CMD_<i>_OUTPUT and ${CMD_<i>_OUTPUT}', async () => {
    const h = makeHarness();
    const template = cliTemplate(['echo alpha', 'echo beta', 'echo "$CMD_0_OUTPUT-${CMD_1_OUTPUT}"']);
    expect(await h.call(template)).toBe('alpha-beta');
  });

  it('passes arguments to later steps through $CMD_<i>_OUTPUT without re-evaluating them', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    const template = cliTemplate(['printf %s UTCP_ARG_v_UTCP_END', 'echo "got: $CMD_0_OUTPUT"']);
    expect(await h.call(template, { v: '$(touch canary)' })).toBe('got: $(touch canary)');
    expect(existsSync(join(dir, 'canary'))).toBe(false);
  });
});

describe('cli calls: exit status', () => {
  it('throws CliExitError with the exit code and the output tail', async () => {
    const h = makeHarness();
    const error = await caught(h.call(cliTemplate('echo working; echo "disk full" >&2; exit 3')));
    expect(error).toBeInstanceOf(CliExitError);
    expect(error).toMatchObject({ code: 'PROCESS_EXIT', exitCode: 3 });
    expect(error.outputTail).toContain('disk full');
    expect(error.message).toContain('cli call demo.t exited with code 3');
  });

  it('keeps the output of a last step that fails without calling exit', async () => {
    const h = makeHarness();
    const error = await caught(h.call(cliTemplate(['echo first', 'echo "no such file" >&2; false'])));
    expect(error).toMatchObject({ exitCode: 1 });
    expect(error.outputTail).toContain('no such file');
    expect(error.outputTail).not.toContain('first');
  });

  it('uses the exit status of the last step only', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(['false', 'echo fine']))).toBe('fine');
    await expect(h.call(cliTemplate(['true', 'false']))).rejects.toMatchObject({ exitCode: 1 });
  });

  it('ends the script early when a step calls exit', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    const error = await caught(h.call(cliTemplate(['echo bye; exit 7', 'touch second-ran'])));
    expect(error).toMatchObject({ exitCode: 7 });
    expect(error.outputTail).toContain('bye');
    expect(existsSync(join(dir, 'second-ran'))).toBe(false);
  });

  it('returns the output of an early exit 0 with later steps empty', async () => {
    const h = makeHarness();
    expect(
      await h.call(cliTemplate([{ command: 'echo early; exit 0', append_to_final_output: true }, 'echo late'])),
    ).toBe('early');
  });

  it('keeps at most 4 KiB of output in the error', async () => {
    const h = makeHarness();
    const error = await caught(h.call(cliTemplate('head -c 10000 /dev/zero | tr "\\0" a; echo END; exit 2')));
    expect(error.outputTail.length).toBeLessThanOrEqual(4096);
    expect(error.outputTail.trim().endsWith('END')).toBe(true);
  });

  it('reports a shell syntax error as a CliExitError', async () => {
    const h = makeHarness();
    await expect(h.call(cliTemplate('echo "unterminated'))).rejects.toBeInstanceOf(CliExitError);
  });
});

describe('cli calls: arguments', () => {
  it('passes an argument as exactly one word', async () => {
    const h = makeHarness();
    expect(
      await h.call(cliTemplate(`${nodeFixture('echo-args.mjs')} UTCP_ARG_file_UTCP_END`), { file: 'my file.txt' }),
    ).toEqual(['my file.txt']);
  });

  it('stringifies numbers, booleans, objects and arrays per docs/design/transports.md#stringify', async () => {
    const h = makeHarness();
    const cmd = `${nodeFixture('echo-args.mjs')} UTCP_ARG_n_UTCP_END UTCP_ARG_b_UTCP_END UTCP_ARG_o_UTCP_END UTCP_ARG_a_UTCP_END`;
    expect(await h.call(cliTemplate(cmd), { n: 1.5, b: false, o: { k: 'v', n: [1] }, a: [1, 'x'] })).toEqual([
      '1.5',
      'false',
      '{"k":"v","n":[1]}',
      '[1,"x"]',
    ]);
  });

  it('passes an empty string as an empty word', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(`${nodeFixture('echo-args.mjs')} UTCP_ARG_e_UTCP_END`), { e: '' })).toEqual(['']);
  });

  it('throws INVALID_ARGUMENTS for a missing argument before anything runs', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    const error = await caught(h.call(cliTemplate(['touch ran', 'echo UTCP_ARG_name_UTCP_END']), { other: 1 }));
    expect(error).toBeInstanceOf(UtcpError);
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(error.message).toContain('UTCP_ARG_name_UTCP_END');
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('treats a null argument as missing', async () => {
    const h = makeHarness();
    await expect(h.call(cliTemplate('echo UTCP_ARG_x_UTCP_END'), { x: null })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
    });
  });

  it('does not take arguments from the prototype chain', async () => {
    const h = makeHarness();
    await expect(h.call(cliTemplate('echo UTCP_ARG_toString_UTCP_END'), {})).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
    });
  });

  it('rejects a value containing NUL before anything runs', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    const error = await caught(h.call(cliTemplate(['touch ran', 'echo UTCP_ARG_x_UTCP_END']), { x: 'a\0b' }));
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENTS' });
    expect(error.message).toContain('NUL');
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('ignores arguments that no placeholder references', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate('env | grep -c __UTCP_ARG_ || true'), { unused: 'x' })).toBe('0');
  });

  it('draws a fresh 16-hex nonce for every call', async () => {
    const h = makeHarness();
    const template = cliTemplate('env | grep -o "^__UTCP_ARG_[^=]*"; : UTCP_ARG_x_UTCP_END');
    const first = (await h.call(template, { x: 1 })) as string;
    const second = (await h.call(template, { x: 1 })) as string;
    expect(first).toMatch(/^__UTCP_ARG_[0-9a-f]{16}_x$/);
    expect(second).toMatch(/^__UTCP_ARG_[0-9a-f]{16}_x$/);
    expect(first).not.toBe(second);
  });
});

describe('cli calls: working directory and output directory', () => {
  it('runs in rootDir by default', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    expect(await h.call(cliTemplate('pwd -P'))).toBe(await realpathOf(dir));
  });

  it('resolves working_dir relative to rootDir', async () => {
    const dir = await tempDir();
    await mkdir(join(dir, 'work', 'here'), { recursive: true });
    await writeFile(join(dir, 'work', 'here', 'marker.txt'), 'ok');
    const h = makeHarness({ rootDir: dir });
    expect(await h.call(cliTemplate('cat marker.txt', { working_dir: 'work/here' }))).toBe('ok');
  });

  it('rejects a working_dir that does not exist, before running anything', async () => {
    const dir = await tempDir();
    const h = makeHarness({ rootDir: dir });
    await expect(h.call(cliTemplate('touch ran', { working_dir: 'missing' }))).rejects.toThrow(
      /working_dir "missing" does not exist/,
    );
    expect(existsSync(join(dir, 'ran'))).toBe(false);
  });

  it('rejects a working_dir that is a file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'file'), '');
    const h = makeHarness({ rootDir: dir });
    await expect(h.call(cliTemplate('true', { working_dir: 'file' }))).rejects.toThrow(/not a directory/);
  });

  it('writes step outputs to a private 0700 directory removed after the call', async () => {
    const h = makeHarness();
    const template = cliTemplate([
      { command: 'true', append_to_final_output: false },
      'd=$(env | sed -n "s/^__UTCP_OUT_[0-9a-f]\\{16\\}=//p"); echo "$d"; stat -c %a "$d"',
    ]);
    const [dir, mode] = ((await h.call(template)) as string).split('\n');
    expect(dir).toMatch(/utcp-cli-/);
    expect(mode).toBe('700');
    expect(existsSync(dir)).toBe(false);
  });

  it('runs a one-step call without an output directory or an acknowledgement pipe', async () => {
    const h = makeHarness();
    const out = (await h.call(
      cliTemplate(
        'env | grep -c "^__UTCP_OUT_" || true; if { true >&3; } 2>/dev/null; then echo fd3; else echo no-fd3; fi',
      ),
    )) as string;
    expect(out.split('\n')).toEqual(['0', 'no-fd3']);
  });

  it('removes the output directory after a failed call too', async () => {
    const h = makeHarness();
    const error = await caught(h.call(cliTemplate(['true', 'env | sed -n "s/^__UTCP_OUT_[0-9a-f]*=//p"; exit 1'])));
    const dir = (error as CliExitError).outputTail.trim();
    expect(dir).toMatch(/utcp-cli-/);
    expect(existsSync(dir)).toBe(false);
  });
});

describe('cli template checks', () => {
  it('rejects an empty commands list', async () => {
    const h = makeHarness();
    await expect(h.call({ call_template_type: 'cli', commands: [] })).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('rejects a non-positive timeout', async () => {
    const h = makeHarness();
    await expect(h.call(cliTemplate('true', { timeout: 0 }))).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('rejects env_vars values that are not strings', async () => {
    const h = makeHarness();
    await expect(h.call(cliTemplate('true', { env_vars: { A: 1 as unknown as string } }))).rejects.toMatchObject({
      code: 'INVALID_MANUAL',
    });
  });
});

describe('cli transport lifecycle', () => {
  it('is created by createCliTransport with type "cli"', async () => {
    const transport = createCliTransport(createTestContext());
    expect(transport.type).toBe('cli');
    await transport.close();
  });

  it('can be closed twice and refuses calls afterwards', async () => {
    const h = makeHarness();
    await h.transport.close();
    await h.transport.close();
    await expect(h.call(cliTemplate('echo hi'))).rejects.toMatchObject({ code: 'CLIENT_CLOSED' });
  });

  it('has nothing to free per manual on deregister', async () => {
    const h = makeHarness();
    await h.transport.deregisterManual();
    expect(await h.call(cliTemplate('echo still works'))).toBe('still works');
  });
});

async function realpathOf(path: string): Promise<string> {
  const { realpath } = await import('node:fs/promises');
  return realpath(path);
}
