/**
 * A manual's `pattern` keywords run on the linear-time engine (docs/design/threat-model.md#regex-unsupported): what
 * the engine cannot run is skipped with a warning (never handed to the backtracking RegExp), Unicode semantics are
 * kept, and the size bounds hold. Runs on the built package; no pattern here backtracks catastrophically, the
 * attacks themselves are in regex-untrusted.test.ts (in child processes).
 */
import { describe, expect, it } from 'vitest';
import { UtcpClient, UtcpArgumentsError } from './packed.js';

async function clientWith(inputs: Record<string, unknown>) {
  const warnings: unknown[][] = [];
  const client = await UtcpClient.create({}, { logger: { warn: (...m: unknown[]) => warnings.push(m) } });
  await client.registerFunctions('m', [{ name: 'echo', inputs, handler: async (args) => args }]);
  const call = (args: Record<string, unknown>) => client.callTool('m.echo', args);
  return { client, warnings, call };
}

describe("a manual's pattern keywords", () => {
  it('a lookahead pattern is skipped with one warning naming the tool and the pattern; the rest still applies', async () => {
    const { client, warnings, call } = await clientWith({
      type: 'object',
      properties: { password: { type: 'string', pattern: '^(?=.*[A-Z]).{8,}$', maxLength: 12 } },
    });
    try {
      await expect(call({ password: 'abc' })).resolves.toEqual({ password: 'abc' });
      await expect(call({ password: 'a'.repeat(13) })).rejects.toBeInstanceOf(UtcpArgumentsError);
      await expect(call({ password: 7 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
      expect(warnings).toHaveLength(1);
      const text = JSON.stringify(warnings[0]);
      expect(text).toContain('m.echo');
      expect(text).toContain('^(?=.*[A-Z]).{8,}$');
      expect(text).toContain('lookahead');
    } finally {
      await client.close();
    }
  });

  it('backreferences (\\1 and \\k<name>) and oversized repeats are skipped, never run by RegExp', async () => {
    const { client, warnings, call } = await clientWith({
      type: 'object',
      properties: {
        a: { type: 'string', pattern: '^(a+)\\1$' },
        b: { type: 'string', pattern: '^(?<x>b+)\\k<x>$' },
        c: { type: 'string', pattern: '^.{1,1000}$' },
      },
    });
    try {
      // Each value fails its pattern under JavaScript's RegExp; skipped keywords accept it.
      await expect(call({ a: 'aaa', b: 'bbb', c: '' })).resolves.toEqual({ a: 'aaa', b: 'bbb', c: '' });
      expect(warnings).toHaveLength(1);
      const [fields] = warnings[0] as [{ patterns: string[] }];
      // Each skipped pattern is quoted as JSON, then its problem.
      expect(fields.patterns).toEqual([
        expect.stringContaining(`${JSON.stringify('^(a+)\\1$')}: invalid escape sequence`),
        expect.stringContaining(`${JSON.stringify('^(?<x>b+)\\k<x>$')}: backreferences`),
        expect.stringContaining(`${JSON.stringify('^.{1,1000}$')}: it compiles to 2003 instructions`),
      ]);
    } finally {
      await client.close();
    }
  });

  it('patterns keep the Unicode semantics of the `u` flag and accept `\\-`', async () => {
    const { client, warnings, call } = await clientWith({
      type: 'object',
      properties: {
        emoji: { type: 'string', pattern: '^.$' },
        word: { type: 'string', pattern: '^\\p{L}+$' },
        code: { type: 'string', pattern: '^[a-z\\-]+\\u00e9$' },
        named: { type: 'string', pattern: '^(?<y>\\d{4})-\\d{2}$' },
        after: { type: 'string', pattern: '(?<=\\$)\\d+' },
      },
      patternProperties: { '^x-\\p{Lu}': { type: 'integer' } },
    });
    try {
      const ok = { emoji: '😀', word: 'héllo', code: 'a-bé', named: '2026-11', after: '$5', 'x-Ä': 1 };
      await expect(call(ok)).resolves.toEqual(ok);
      for (const [key, value] of [
        ['emoji', '😀😀'],
        ['word', 'p{L}'],
        ['code', 'a_bé'],
        ['named', '26-11'],
        ['after', '5'],
        ['x-Ä', 'one'],
      ] as const) {
        const error = await call({ [key]: value }).catch((e: unknown) => e);
        expect(error, `${key}: ${value}`).toBeInstanceOf(UtcpArgumentsError);
        expect((error as UtcpArgumentsError).issues[0].path).toBe(key);
      }
      expect(warnings).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
