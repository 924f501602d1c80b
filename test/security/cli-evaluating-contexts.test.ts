/**
 * Threat model (docs/design/threat-model.md#cli-evaluating-contexts): a tool argument never reaches a shell
 * construct that evaluates text. Arithmetic and name contexts (directly or through variables assigned from
 * the value) accept only an integer literal, checked before anything runs (UtcpArgumentsError); code
 * contexts are refused for any value (INVALID_MANUAL). Every case runs through the public API with a
 * canary file that the payload tries to create; it must never appear.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UtcpArgumentsError, UtcpClient, UtcpError } from './packed.js';
import { cliTemplate, makeHarness, tempDir } from '../fixtures/cli/harness.js';

const P = 'UTCP_ARG_v_UTCP_END';

/** Constructs that evaluate the value as arithmetic or as a variable name; `ok` is the output for v=2. */
const INTEGER_CONTEXTS: Array<{ construct: string; command: string | string[]; ok?: string }> = [
  { construct: '$(( ))', command: `echo $((${P} + 1))`, ok: '3' },
  { construct: '$(( "…" ))', command: `echo $(( "${P}" * 2 ))`, ok: '4' },
  { construct: '(( ))', command: `(( ${P} > 1 )) && echo big`, ok: 'big' },
  { construct: 'for (( ))', command: `for (( i = 0; i < ${P}; i++ )); do printf x; done`, ok: 'xx' },
  { construct: '[[ -gt ]]', command: `[[ ${P} -gt 1 ]] && echo big`, ok: 'big' },
  { construct: '[[ "…" -eq ]]', command: `[[ "${P}" -eq 2 ]] && echo two`, ok: 'two' },
  { construct: 'let', command: `let "x = ${P} + 1"; echo $x`, ok: '3' },
  { construct: 'array subscript in ${a[…]}', command: `a=(x y z); echo "\${a[${P}]}"`, ok: 'z' },
  { construct: 'array subscript assignment', command: `a=(); a[${P}]=1; echo "\${!a[@]}"`, ok: '2' },
  { construct: 'array literal subscript', command: `a=([${P}]=q); echo "\${a[2]}"`, ok: 'q' },
  { construct: '${s:offset}', command: `s=hello; echo "\${s:${P}}"`, ok: 'llo' },
  { construct: '$[ ]', command: `echo $[${P} * 3]`, ok: '6' },
  { construct: 'declare -i', command: `declare -i n=${P}; echo $n`, ok: '2' },
  { construct: 'local -i', command: `f() { local -i n=${P}; echo $n; }; f`, ok: '2' },
  { construct: 'printf -v NAME', command: `printf -v ${P} %s 1 2>/dev/null; echo done` },
  { construct: 'read NAME', command: `read ${P} <<< x 2>/dev/null; echo done` },
  { construct: 'declare NAME=', command: `declare ${P}=1 2>/dev/null; echo done` },
  { construct: 'test -v', command: `test -v ${P}; echo done` },
  { construct: '[[ -v ]]', command: `[[ -v ${P} ]]; echo done` },
  // Through variables.
  { construct: 'a variable in $(( ))', command: `n=${P}; echo $((n + 1))`, ok: '3' },
  { construct: 'an exported copy in (( ))', command: `export N="${P}"; m=$N; (( m > 1 )) && echo big`, ok: 'big' },
  { construct: '${!name}', command: `n=${P}; set -- a b; echo "\${!n}"`, ok: 'b' },
  { construct: 'a command substitution', command: `x=$(echo ${P}); echo $((x))`, ok: '2' },
  { construct: 'read from a here-string', command: `read -r n <<< "${P}"; echo $((n))`, ok: '2' },
  { construct: 'a for loop variable', command: `for n in ${P}; do echo $((n)); done`, ok: '2' },
  { construct: 'a function parameter', command: `f() { echo $(( $1 + 1 )); }; f ${P}`, ok: '3' },
  { construct: 'the previous step output', command: [`echo ${P}`, 'echo $((CMD_0_OUTPUT + 1))'], ok: '2\n3' },
];

/** Constructs that run the value as code: refused whatever the value. */
const CODE_CONTEXTS: Array<{ construct: string; command: string }> = [
  { construct: 'eval', command: `eval "echo ${P}"` },
  { construct: 'eval of a variable', command: `c=${P}; eval "$c"` },
  { construct: 'source', command: `source ${P}` },
  { construct: '.', command: `. ${P}` },
  { construct: 'trap', command: `trap "echo ${P}" EXIT` },
  { construct: 'bash -c', command: `bash -c "echo ${P}"` },
  { construct: "sh -c '…'", command: `sh -c 'echo ${P}'` },
  { construct: 'env sh -c', command: `env LC_ALL=C sh -c "echo ${P}"` },
  { construct: 'find -exec sh -c', command: `find . -maxdepth 0 -exec sh -c 'echo ${P}' \\;` },
  { construct: 'a pipe into bash', command: `echo "${P}" | bash` },
  { construct: 'a here-document into sh', command: `sh <<EOF\necho ${P}\nEOF` },
  { construct: 'a here-string into bash', command: `bash <<< "echo ${P}"` },
  { construct: 'python -c', command: `python3 -c "print('${P}')"` },
  { construct: 'node -e', command: `node -e "console.log('${P}')"` },
  { construct: 'perl -e', command: `perl -e 'print "${P}"'` },
  { construct: "awk's program", command: `awk 'BEGIN { print "${P}" }'` },
  { construct: "sed's script", command: `sed "s/x/${P}/" <<< x` },
  { construct: '${x@P}', command: `p=${P}; echo "\${p@P}"` },
  { construct: 'the command name', command: `${P} --version` },
  { construct: 'BASH_ENV', command: `BASH_ENV=${P} bash -c true` },
  { construct: 'PS4 under xtrace', command: `PS4=${P}; set -x; true` },
  { construct: 'mapfile -C', command: `mapfile -C ${P} -c 1 x <<< y` },
];

const ATTACKS = [
  'a[$(touch CANARY)]',
  'a[`touch CANARY`]',
  'x[$(touch CANARY)]+1',
  '$(touch CANARY)',
  'PATH=0',
  '1+1',
  ' 2',
  '2e3',
  '0x10',
];

let dir: string;
let client: UtcpClient;
let canaries = 0;
/** A fresh canary path per case, so that one escape cannot hide another. */
const nextCanary = () => join(dir, `canary-${canaries++}`);

function toolsFor(entries: Array<{ command: string | string[] }>, prefix: string) {
  return entries.map((e, i) => ({
    name: `${prefix}${i}`,
    description: 'context case',
    inputs: { type: 'object', properties: { v: { type: 'string' } }, required: ['v'] },
    tool_call_template: {
      call_template_type: 'cli',
      commands: (Array.isArray(e.command) ? e.command : [e.command]).map((command) => ({
        command,
        append_to_final_output: true,
      })),
    },
  }));
}

beforeAll(async () => {
  dir = await tempDir(() => {});
  client = await UtcpClient.create({}, { rootDir: dir });
  const tools = toolsFor(INTEGER_CONTEXTS, 'int');
  const r = await client.registerManual({
    name: 'm',
    call_template_type: 'text',
    content: JSON.stringify({ tools }),
    allowed_communication_protocols: ['cli'],
  });
  expect(r.errors).toEqual([]);
  expect(r.warnings).toEqual([]);
});
afterAll(async () => {
  await client.close();
  const { rm } = await import('node:fs/promises');
  await rm(dir, { recursive: true, force: true });
});

describe('cli: arithmetic and name contexts take integer literals only', () => {
  it.each(INTEGER_CONTEXTS.map((c, i) => ({ ...c, i })))('$construct', async ({ i, ok }) => {
    const canary = nextCanary();
    for (const attack of ATTACKS) {
      const value = attack.replaceAll('CANARY', canary);
      const error = await client.callTool(`m.int${i}`, { v: value }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `value ${JSON.stringify(value)}`).toBeInstanceOf(UtcpArgumentsError);
      expect((error as UtcpError).code).toBe('INVALID_ARGUMENTS');
      expect((error as UtcpArgumentsError).issues[0].path).toBe('v'); // names the argument
      expect((error as Error).message).not.toContain(value); // never echoes the value
      expect(existsSync(canary)).toBe(false);
    }
    if (ok !== undefined) expect(await client.callTool(`m.int${i}`, { v: '2' })).toBe(ok);
  });
});

describe('cli: code contexts are refused for every value', () => {
  it('refuses each such tool when its manual is registered, naming the construct', async () => {
    const local = await UtcpClient.create({}, { rootDir: dir });
    const tools = toolsFor(CODE_CONTEXTS, 'code');
    const r = await local.registerManual({
      name: 'k',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['cli'],
    });
    expect(r.manual.tools).toEqual([]);
    expect(r.warnings).toHaveLength(CODE_CONTEXTS.length);
    for (const w of r.warnings) expect(w).toMatch(/argument "v" would (be run as code|choose the command)/);
    await local.close();
  });

  // The call checks again before anything runs, for templates that reach the transport another way.
  it.each(CODE_CONTEXTS.map((c, i) => ({ ...c, i })))('$construct, at call time', async ({ command }) => {
    const canary = nextCanary();
    const h = makeHarness({ rootDir: dir });
    for (const value of ['2', `$(touch ${canary})`, `touch ${canary}`]) {
      await expect(h.call(cliTemplate(command), { v: value })).rejects.toMatchObject({ code: 'INVALID_MANUAL' });
      expect(existsSync(canary)).toBe(false);
    }
  });
});

describe('cli: plain contexts still take any value literally', () => {
  it('keeps values with brackets and substitutions as text in arguments, strings and here-documents', async () => {
    const canary = nextCanary();
    const local = await UtcpClient.create({}, { rootDir: dir });
    const commands = [
      `printf '%s|' ${P} "${P}" '${P}'`,
      `count=$(printf 'a\\nb\\n' | wc -l); [[ $count -gt 1 ]] && printf 'many|'`,
      `cat <<EOF\n${P}\nEOF`,
      `bash -c 'printf "%s|" "$1"' _ ${P}`,
    ];
    const tools = [
      {
        name: 't',
        description: '',
        inputs: { type: 'object', properties: { v: { type: 'string' } } },
        tool_call_template: { call_template_type: 'cli', commands: [{ command: commands.join('\n') }] },
      },
    ];
    await local.registerManual({
      name: 'p',
      call_template_type: 'text',
      content: JSON.stringify({ tools }),
      allowed_communication_protocols: ['cli'],
    });
    const value = `a[$(touch ${canary})]`;
    expect(await local.callTool('p.t', { v: value })).toBe(`${value}|${value}|${value}|many|${value}\n${value}|`);
    expect(existsSync(canary)).toBe(false);
    await local.close();
  });
});
