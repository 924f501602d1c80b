import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { codeWorkspace } from './helpers.js';

const hasRipgrep = spawnSync('rg', ['--version']).status === 0;

const project = {
  '.gitignore': 'dist/\n*.log\n',
  'src/a.ts': 'export const answer = 42;\n// TODO: more\n',
  'src/b.js': 'const answer = 41;\n',
  'src/nested/.gitignore': 'secret.ts\n',
  'src/nested/c.ts': 'answer();\n',
  'src/nested/secret.ts': 'answer = "hidden";\n',
  'dist/out.js': 'answer = 42;\n',
  'debug.log': 'answer\n',
  'README.md': '# Answer\n',
};

describe.each([
  ['built-in', false as const],
  ['ripgrep', undefined],
])('code.grep (%s)', (label, ripgrep) => {
  it.skipIf(label === 'ripgrep' && !hasRipgrep)(
    'finds path:line:text, sorted, respecting .gitignore (root and nested)',
    async () => {
      const { call } = await codeWorkspace(project, { ripgrep });
      expect(await call('grep', { pattern: 'answer\\s*=' })).toBe(
        ['src/a.ts:1:export const answer = 42;', 'src/b.js:1:const answer = 41;'].join('\n'),
      );
    },
  );

  it.skipIf(label === 'ripgrep' && !hasRipgrep)('filters by glob and path, ignores case on request', async () => {
    const { call } = await codeWorkspace(project, { ripgrep });
    expect(await call('grep', { pattern: 'answer', glob: '*.ts' })).toBe(
      ['src/a.ts:1:export const answer = 42;', 'src/nested/c.ts:1:answer();'].join('\n'),
    );
    expect(await call('grep', { pattern: 'answer', path: 'src/nested' })).toBe('src/nested/c.ts:1:answer();');
    expect(await call('grep', { pattern: 'ANSWER', path: 'README.md', ignore_case: true })).toBe(
      'README.md:1:# Answer',
    );
    expect(await call('grep', { pattern: 'nothing-like-this' })).toBe('No matches for "nothing-like-this" in .');
  });

  it.skipIf(label === 'ripgrep' && !hasRipgrep)('caps the matches and says so', async () => {
    const many = Array.from({ length: 30 }, (_, i) => `hit ${i}`).join('\n');
    const { call } = await codeWorkspace({ 'm.txt': many }, { ripgrep });
    const out = (await call('grep', { pattern: 'hit', head_limit: 5 })).split('\n');
    expect(out).toHaveLength(6);
    expect(out[4]).toBe('m.txt:5:hit 4');
    expect(out[5]).toBe('(capped at 5 matches; narrow the pattern, path or glob, or raise head_limit)');
  });
});

describe('code.glob and code.ls', () => {
  it('glob matches paths, respects .gitignore and caps', async () => {
    const { call } = await codeWorkspace(project, { limits: { listEntries: 2 } });
    expect(await call('glob', { pattern: '**/*.ts' })).toBe('src/a.ts\nsrc/nested/c.ts');
    expect(await call('glob', { pattern: '*.js' })).toBe('src/b.js');
    expect(await call('glob', { pattern: '*', path: 'src' })).toBe(
      'src/a.ts\nsrc/b.js\n(2 more files not shown; narrow the pattern)',
    );
  });

  it('ls lists a directory, hides ignored entries and counts them', async () => {
    const { call, fail } = await codeWorkspace(project);
    expect(await call('ls', {})).toBe('.gitignore\nREADME.md\nsrc/\n(2 ignored entries not shown)');
    expect(await call('ls', { path: 'src/nested' })).toBe('.gitignore\nc.ts\n(1 ignored entry not shown)');
    expect(await fail('ls', { path: 'README.md' })).toContain('README.md is a file; use read');
  });

  it('ls caps the entries', async () => {
    const { call } = await codeWorkspace({ '1': '', '2': '', '3': '' }, { limits: { listEntries: 2 } });
    expect(await call('ls', { path: '.' })).toBe('1\n2\n(1 more entries not shown)');
  });
});
