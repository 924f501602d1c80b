/**
 * The cli transport reads a template's commands once and keeps the reading per distinct command list
 * (docs/design/transports.md#cli-fast-path). A kept reading must still give every call its own nonce, keep checking
 * each call's values against the evaluating contexts, and never keep a template it refused.
 */
import { describe, expect, it } from 'vitest';
import { UtcpArgumentsError } from '../../src/core/errors.js';
import { RandomTokens } from '../../src/process/random-tokens.js';
import { PLAN_CACHE_MAX_CHARS, PLAN_CACHE_SIZE } from '../../src/transports/cli/cli-transport.js';
import { planPlaceholders, renderPlan, rewritePlaceholders } from '../../src/transports/cli/rewrite-placeholders.js';
import { caught, cliTemplate, makeHarness } from '../fixtures/cli/harness.js';

describe('cli: the kept reading of a template', () => {
  it('gives each call a fresh nonce: the argument variables are named differently every time', async () => {
    const h = makeHarness();
    // Prints the names of the argument variables the shell was given.
    const template = cliTemplate(': UTCP_ARG_a_UTCP_END; compgen -e | grep "^__UTCP_ARG_"');
    const first = await h.call(template, { a: 'x' });
    const second = await h.call(template, { a: 'y' });
    expect(first).toMatch(/^__UTCP_ARG_[0-9a-f]{16}_a$/);
    expect(second).toMatch(/^__UTCP_ARG_[0-9a-f]{16}_a$/);
    expect(second).not.toBe(first);
  });

  it('checks every call’s value against an arithmetic context, not only the first call’s', async () => {
    const h = makeHarness();
    const template = cliTemplate('echo $((UTCP_ARG_n_UTCP_END + 1))');
    expect(await h.call(template, { n: 2 })).toBe('3');
    const error = await caught(h.call(template, { n: 'a[$(touch /tmp/never)]' }));
    expect(error).toBeInstanceOf(UtcpArgumentsError);
    expect(await h.call(template, { n: 41 })).toBe('42');
  });

  it('refuses a template with a code context on every call (a refusal is not kept as a reading)', async () => {
    const h = makeHarness();
    const template = cliTemplate('eval "echo UTCP_ARG_v_UTCP_END"');
    for (let i = 0; i < 2; i++)
      expect(await caught(h.call(template, { v: 'x' }))).toMatchObject({ code: 'INVALID_MANUAL' });
  });

  it('tells apart two command lists that join to the same text', async () => {
    const h = makeHarness();
    expect(await h.call(cliTemplate(['echo a', 'echo b']))).toBe('b');
    expect(await h.call(cliTemplate('echo a\necho b'))).toBe('a\nb');
    expect(await h.call(cliTemplate(['echo a', 'echo b']))).toBe('b');
  });

  it(`reads a command list longer than ${PLAN_CACHE_MAX_CHARS} characters on every call, with the same results`, async () => {
    const h = makeHarness();
    // A long comment line, then a command whose value must be checked on each call.
    const template = cliTemplate(`# ${'x'.repeat(PLAN_CACHE_MAX_CHARS)}\necho $((UTCP_ARG_n_UTCP_END * 2))`);
    expect(await h.call(template, { n: 21 })).toBe('42');
    expect(await caught(h.call(template, { n: 'a[$(id)]' }))).toBeInstanceOf(UtcpArgumentsError);
    expect(await h.call(template, { n: 5 })).toBe('10');
  });

  it(`keeps working past ${PLAN_CACHE_SIZE} distinct templates (the oldest reading is dropped and read again)`, async () => {
    const h = makeHarness();
    for (let i = 0; i <= PLAN_CACHE_SIZE; i++) {
      expect(await h.call(cliTemplate(`echo ${i}-UTCP_ARG_v_UTCP_END`), { v: 'x' })).toBe(`${i}-x`);
    }
    expect(await h.call(cliTemplate('echo 0-UTCP_ARG_v_UTCP_END'), { v: 'again' })).toBe('0-again');
  }, 60_000);
});

describe('cli: a command read once, rendered per nonce', () => {
  const commands = [
    'echo UTCP_ARG_a_UTCP_END "UTCP_ARG_b_UTCP_END" \'UTCP_ARG_a_UTCP_END\'',
    'cat <<EOF\nUTCP_VAR_key_UTCP_END UTCP_ARG_a_UTCP_END\nEOF',
    'printf %s "$(echo UTCP_ARG_b_UTCP_END)" `echo UTCP_ARG_a_UTCP_END`',
  ];

  it('renders exactly what rewriting the command with that nonce gives', () => {
    for (const command of commands) {
      const plan = planPlaceholders(command, 'bash');
      for (const nonce of ['0123456789abcdef', 'fedcba9876543210']) {
        const rewritten = rewritePlaceholders(command, 'bash', nonce);
        expect(renderPlan(plan, nonce)).toBe(rewritten.text);
        expect([...plan.names]).toEqual(rewritten.names);
        expect([...plan.variables]).toEqual(rewritten.variables);
      }
    }
  });
});

describe('RandomTokens', () => {
  it('draws hex tokens of the asked size, all different, across many refills of its block', () => {
    const tokens = new RandomTokens();
    const seen = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const size = [8, 12, 16, 300][i % 4];
      const token = tokens.hex(size);
      expect(token).toMatch(new RegExp(`^[0-9a-f]{${size * 2}}$`));
      seen.add(token);
    }
    expect(seen.size).toBe(2_000);
  });

  it('refuses sizes it cannot serve', () => {
    const tokens = new RandomTokens();
    for (const size of [0, -1, 1.5, 513, Number.NaN]) expect(() => tokens.hex(size)).toThrow(RangeError);
  });
});
