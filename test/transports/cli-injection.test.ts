/**
 * The CLI injection corpus (docs/design/security.md#attack-cases): every payload, unquoted, double- and single-quoted,
 * run end to end through bash. The tool must receive exactly the value, the canary file must never
 * appear, and the payload must never be part of the script text.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliTemplate, makeHarness, nodeFixture, tempDir } from '../fixtures/cli/harness.js';

/** Payloads; CANARY is replaced by the path of a file that must never be created. */
const PAYLOADS: string[] = [
  'data.csv; touch CANARY',
  'data.csv && touch CANARY',
  'data.csv | touch CANARY',
  'data.csv `touch CANARY`',
  'data.csv $(touch CANARY)',
  'data.csv"; touch CANARY; "',
  "data.csv'; touch CANARY; '",
  '"; touch CANARY; "',
  "'; touch CANARY; '",
  `'"$(touch CANARY)"'`,
  'value with spaces',
  "value'with'quote",
  'line one\ntouch CANARY\nline three',
  'a\\"; touch CANARY; #',
  '*',
  '/*',
  '$HOME ${PATH} $0 $$',
  '} >/dev/null; touch CANARY; {',
  ') ; touch CANARY ; (',
  'UTCP_ARG_other_UTCP_END',
  '$(<CANARY)',
  '\\',
  ' leading and trailing spaces  ',
  '-n',
  '~',
  'ünïcødé ✓ 🚀',
];

const CONTEXTS: Array<{ name: string; wrap: (placeholder: string) => string; expected: (value: string) => string }> = [
  { name: 'unquoted', wrap: (p) => p, expected: (v) => v },
  { name: 'double-quoted', wrap: (p) => `"<${p}>"`, expected: (v) => `<${v}>` },
  { name: 'single-quoted', wrap: (p) => `'<${p}>'`, expected: (v) => `<${v}>` },
];

describe.concurrent.each(CONTEXTS)('injection corpus, $name placeholder', ({ wrap, expected }) => {
  it.for(PAYLOADS)('passes %j as one literal value', async (payload, { onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const canary = join(dir, 'canary');
    const value = payload.replaceAll('CANARY', canary);
    const h = makeHarness({ rootDir: dir, onFinished: onTestFinished });
    const command = [
      `${nodeFixture('echo-args.mjs')} ${wrap('UTCP_ARG_v_UTCP_END')}`,
      // The script text itself, as bash received it, must not contain the value.
      'printf "%s" "$BASH_EXECUTION_STRING" > script.txt',
    ].join('; ');
    const template = cliTemplate([{ command, append_to_final_output: true }]);
    const result = (await h.call(template, { v: value, other: 'must-not-be-used' })) as unknown;
    expect(result).toEqual([expected(value)]);
    expect(existsSync(canary)).toBe(false);
    const { readFile } = await import('node:fs/promises');
    const script = await readFile(join(dir, 'script.txt'), 'utf8');
    expect(script).toMatch(/__UTCP_ARG_[0-9a-f]{16}_v/);
    if (value.trim().length > 3) expect(script).not.toContain(value);
  });
});

describe('injection: composition', () => {
  it('composes several placeholders inside one double-quoted string', async () => {
    const dir = await tempDir();
    const canary = join(dir, 'canary');
    const h = makeHarness({ rootDir: dir });
    const cmd = `${nodeFixture('echo-args.mjs')} "UTCP_ARG_a_UTCP_END:UTCP_ARG_b_UTCP_END" 'x-UTCP_ARG_a_UTCP_END-y' UTCP_ARG_b_UTCP_END`;
    const a = `$(touch ${canary})`;
    const b = `"; touch ${canary}; "`;
    expect(await h.call(cliTemplate(cmd), { a, b })).toEqual([`${a}:${b}`, `x-${a}-y`, b]);
    expect(existsSync(canary)).toBe(false);
  });

  it('keeps a lazy-named placeholder followed by a suffix as one word', async () => {
    const h = makeHarness();
    expect(
      await h.call(cliTemplate(`${nodeFixture('echo-args.mjs')} UTCP_ARG_a_UTCP_END123suffix`), { a: 'v w' }),
    ).toEqual(['v w123suffix']);
  });

  it('substitutes inside $( … ) nested in double quotes as one word', async () => {
    const h = makeHarness();
    const cmd = `${nodeFixture('echo-args.mjs')} "$(printf '%s|' UTCP_ARG_a_UTCP_END)"`;
    expect(await h.call(cliTemplate(cmd), { a: 'two words' })).toEqual(['two words|']);
  });

  it("substitutes inside an ANSI-C $'…' string", async () => {
    const h = makeHarness();
    expect(
      await h.call(cliTemplate(`${nodeFixture('echo-args.mjs')} $'tab\\there:UTCP_ARG_a_UTCP_END'`), { a: "it's $x" }),
    ).toEqual(["tab\there:it's $x"]);
  });

  it('substitutes inside an unquoted here-document without re-evaluating the value', async () => {
    const dir = await tempDir();
    const canary = join(dir, 'canary');
    const h = makeHarness({ rootDir: dir });
    const value = `$(touch ${canary}) \`touch ${canary}\``;
    expect(await h.call(cliTemplate("cat <<EOF\nvalue: UTCP_ARG_a_UTCP_END\nit's fine\nEOF"), { a: value })).toBe(
      `value: ${value}\nit's fine`,
    );
    expect(existsSync(canary)).toBe(false);
  });

  it('keeps a literal backslash before a double-quoted placeholder', async () => {
    const h = makeHarness();
    expect(
      await h.call(cliTemplate(`${nodeFixture('echo-args.mjs')} "C:\\UTCP_ARG_a_UTCP_END"`), { a: 'dir' }),
    ).toEqual(['C:\\dir']);
  });
});
