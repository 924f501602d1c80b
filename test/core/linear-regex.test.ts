/** The linear-time engine wrapper (docs/design/security.md#untrusted-regex): dialects, bounds, searches from an offset. */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  compileLinearRegex,
  compileUntrustedRegex,
  MAX_REGEX_CHARS,
  MAX_REGEX_PROGRAM,
  type LinearRegexOptions,
} from '../../src/core/linear-regex.js';

const RE2: LinearRegexOptions = { dialect: 're2' };
const ECMA: LinearRegexOptions = { dialect: 'ecmascript' };

function compiled(pattern: string, options: LinearRegexOptions) {
  const result = compileLinearRegex(pattern, options);
  if (!result.ok) throw new Error(`${pattern}: ${result.problem}`);
  return result.regex;
}

function problem(pattern: string, options: LinearRegexOptions): string {
  const result = compileLinearRegex(pattern, options);
  if (result.ok) throw new Error(`${pattern} compiled`);
  return result.problem;
}

beforeAll(async () => {
  await compileUntrustedRegex('a', RE2); // loads the engine
});

describe('compileLinearRegex', () => {
  it('takes RE2 syntax from the model, and JavaScript spellings too', () => {
    expect(compiled('(?P<n>a)\\x{42}', RE2).test('xaB')).toBe(true);
    expect(compiled('(?<n>a)\\u0042', RE2).test('xaB')).toBe(true);
    expect(compiled('ERROR', { dialect: 're2', ignoreCase: true }).test('an error')).toBe(true);
    expect(compiled('ERROR', RE2).test('an error')).toBe(false);
  });

  it('refuses what needs backtracking, saying why', () => {
    expect(problem('(?=a)b', RE2)).toMatch(/`\(\?=`.*lookahead/);
    expect(problem('(a)\\1', RE2)).toMatch(/\\1.*backreferences/);
    expect(problem('(?<=a)b', RE2)).toMatch(/lookbehind/);
    expect(problem('(?<x>a)\\k<x>', ECMA)).toMatch(/backreferences \(\\k<name>\)/);
    expect(problem('(?=a)b', ECMA)).toMatch(/lookahead/);
  });

  it('runs captureless lookbehind for JSON Schema patterns (linear in re2js)', () => {
    const re = compiled('(?<=\\$)\\d+', ECMA);
    expect(re.test('cost $5')).toBe(true);
    expect(re.test('cost 5')).toBe(false);
  });

  it('bounds the pattern length and the compiled program', () => {
    expect(problem('a'.repeat(MAX_REGEX_CHARS + 1), RE2)).toMatch(/at most 10000 are accepted/);
    expect(problem('^.{1,1000}$', RE2)).toMatch(/2003 instructions; at most 2000/);
    expect(problem('a{1001}', RE2)).toMatch(/invalid repeat count/);
    expect(compiled('^[a-z]{1,255}$', ECMA).test('abc')).toBe(true);
    expect(MAX_REGEX_PROGRAM).toBe(2000);
  });

  it('searches from an offset with the left context intact (^, \\b, lookbehind) and without it otherwise', () => {
    expect(compiled('foo', RE2).test('foo..', 1)).toBe(false);
    expect(compiled('foo', RE2).test('foofoo', 2)).toBe(true);
    expect(compiled('^foo', RE2).test('x\nfoo', 2)).toBe(false);
    expect(compiled('(?m)^foo', RE2).test('x\nfoo', 2)).toBe(true);
    expect(compiled('\\bfoo', RE2).test('xfoo', 1)).toBe(false);
    expect(compiled('\\bfoo', RE2).test('x foo', 1)).toBe(true);
    expect(compiled('(?<=x)foo', ECMA).test('xfoo', 1)).toBe(true);
    expect(compiled('(?<=y)foo', ECMA).test('xfoo', 1)).toBe(false);
  });

  it('gives Ajv a key unique per pattern, dialect and case', () => {
    const keys = [
      compiled('a', RE2),
      compiled('a', ECMA),
      compiled('a', { dialect: 're2', ignoreCase: true }),
      compiled('b', RE2),
    ].map(String);
    expect(new Set(keys).size).toBe(4);
  });
});
