/**
 * The model's globs run on the linear-time engine (docs/design/security.md#untrusted-regex) with picomatch's
 * reading of them: the same answers as picomatch (`dot: true`, base name when there is no `/`) on a corpus of
 * globs and workspace paths.
 */
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { untrustedGlob } from '../../src/tools/regex.js';

const GLOBS = [
  '*.ts',
  'src/**/*.js',
  '**/*.md',
  'a?c',
  '[abc]*.md',
  '*.{js,ts}',
  'file[!0-9].txt',
  '+(a|b).js',
  'src/**',
  '**',
  '*',
  '.*',
  '**/.env*',
  'guide/*/README.md',
  '*test*',
  'src/*.ts',
  '**/index.{ts,js}',
  '{a,b}/**/c?',
  '[[:alpha:]]*',
  'x/**/y/**/z',
  '*.[jt]s',
  'a\\*b',
  '@(x|y)',
  '*(ab)c',
  '?(q)r',
  'src',
  'test/**/*.test.ts',
  '**/*a*a*b',
];
const PATHS = [
  'a.ts',
  'src/a.ts',
  'src/x/y/a.js',
  'src/a.js',
  'README.md',
  'guide/x/README.md',
  'guide/README.md',
  'abc',
  'axc',
  'a/c',
  'a.md',
  'q.md',
  'x.tsx',
  'file1.txt',
  'filea.txt',
  'ab.js',
  'src',
  'src/deep/er/file',
  '.env',
  'x/.env.prod',
  '.hidden',
  'mytestfile',
  'src/index.ts',
  'lib/index.js',
  'a/x/y/cd',
  'b/c1',
  'x/a/y/b/z',
  'a*b',
  'axb',
  'ababc',
  'qr',
  'r',
  'test/a/b.test.ts',
  'zaxaxb',
  'node_modules/.bin/x',
];

describe('untrustedGlob', () => {
  it('answers as picomatch does on every glob and path of the corpus', async () => {
    const differences: string[] = [];
    let matched = 0;
    for (const glob of GLOBS) {
      const ours = await untrustedGlob('glob', 'pattern', glob);
      const theirs = picomatch(glob, { dot: true, basename: !glob.includes('/') });
      for (const path of PATHS) {
        if (theirs(path)) matched++;
        if (ours(path) !== theirs(path)) differences.push(`${glob} vs ${path}: picomatch says ${theirs(path)}`);
      }
    }
    expect(differences).toEqual([]);
    expect(matched).toBeGreaterThan(100);
  });

  it('matches a pathological glob against a 250-character name at once, where picomatch took seconds', async () => {
    const match = await untrustedGlob('glob', 'pattern', '*a*a*a*a*a*a*a*a*b');
    const started = performance.now();
    expect(match(`${'a'.repeat(250)}c`)).toBe(false);
    expect(match(`${'a'.repeat(250)}b`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('refuses a negated extglob with a typed argument error', async () => {
    await expect(untrustedGlob('glob', 'pattern', '!(*.d).ts')).rejects.toMatchObject({
      code: 'INVALID_ARGUMENTS',
      issues: [{ path: 'pattern', message: expect.stringMatching(/negated extglobs/) }],
    });
  });
});
