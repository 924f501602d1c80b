import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lineHash } from '../../src/tools/text.js';
import { codeWorkspace } from './helpers.js';

describe('code.read', () => {
  it('numbers lines and gives each a short hash anchor', async () => {
    const { call } = await codeWorkspace({ 'a.txt': 'alpha\nbeta\n' });
    expect(await call('read', { path: 'a.txt' })).toBe(
      `   1:${lineHash('alpha')}\talpha\n   2:${lineHash('beta')}\tbeta`,
    );
    expect(lineHash('alpha')).toMatch(/^[0-9a-z]{4}$/);
    expect(lineHash('alpha')).toBe(lineHash('alpha'));
    expect(lineHash('alpha')).not.toBe(lineHash('alpha '));
  });

  it('pages with offset and limit and announces the next offset', async () => {
    const { call } = await codeWorkspace({ 'a.txt': 'l1\nl2\nl3\nl4\nl5\n' });
    const out = await call('read', { path: 'a.txt', offset: 2, limit: 2 });
    expect(out.split('\n').map((l) => l.split('\t')[1] ?? l)).toEqual([
      'l2',
      'l3',
      '(showing lines 2-3 of 5; read on with offset=4)',
    ]);
    expect(await call('read', { path: 'a.txt', offset: 9 })).toBe('(a.txt has 5 lines; offset 9 is past the end)');
  });

  it('caps the bytes returned and announces where to read on', async () => {
    const text = Array.from({ length: 100 }, (_, i) => `line ${i + 1} ${'x'.repeat(40)}`).join('\n');
    const { call } = await codeWorkspace({ 'big.txt': text }, { limits: { readBytes: 300 } });
    const out = await call('read', { path: 'big.txt' });
    expect(Buffer.byteLength(out)).toBeLessThan(300 + 120);
    const m = /\(output capped at 300 bytes: showing lines 1-(\d+) of 100; read on with offset=(\d+)\)$/.exec(out);
    expect(m).not.toBeNull();
    expect(Number(m![2])).toBe(Number(m![1]) + 1);
    const next = await call('read', { path: 'big.txt', offset: Number(m![2]), limit: 1 });
    expect(next).toContain(`line ${m![2]} `);
  });

  it('cuts long lines, hashing the whole line', async () => {
    const { call } = await codeWorkspace({ 'wide.txt': 'y'.repeat(50) }, { limits: { lineChars: 10 } });
    expect(await call('read', { path: 'wide.txt' })).toBe(
      `   1:${lineHash('y'.repeat(50))}\t${'y'.repeat(10)}… [line cut at 10 characters]`,
    );
  });

  it('refuses binary files; edits refuse files over the size cap', async () => {
    const { root, fail } = await codeWorkspace(
      { 'x.bin': 'ab\0cd', 'big.txt': 'z'.repeat(100) },
      { limits: { maxFileBytes: 50 } },
    );
    await writeFile(join(root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(await fail('read', { path: 'x.bin' })).toContain('x.bin looks like a binary file');
    expect(await fail('read', { path: 'latin1.txt' })).toContain('looks like a binary file');
    expect(await fail('edit', { path: 'big.txt', old_string: 'z', new_string: 'y' })).toContain(
      'big.txt is 100 bytes, more than the 50-byte limit',
    );
  });

  it('points to ls for a directory and reports a missing file', async () => {
    const { fail } = await codeWorkspace({ 'src/a.ts': '' });
    expect(await fail('read', { path: 'src' })).toContain('src is a directory; use ls');
    expect(await fail('read', { path: 'nope.txt' })).toContain('nope.txt does not exist');
  });
});

describe('code.write and code.write_append', () => {
  it('creates a file with its parents and returns the diff', async () => {
    const { root, call } = await codeWorkspace();
    expect(await call('write', { path: 'src/new.ts', content: 'export {};\n' })).toBe(
      'Created src/new.ts (11 bytes, 1 lines)\n\n--- /dev/null\n+++ b/src/new.ts\n@@ -0,0 +1,1 @@\n+export {};',
    );
    expect(await readFile(join(root, 'src/new.ts'), 'utf8')).toBe('export {};\n');
  });

  it('refuses an existing file and names edit', async () => {
    const { root, fail } = await codeWorkspace({ 'a.txt': 'keep me' });
    expect(await fail('write', { path: 'a.txt', content: 'clobber' })).toContain(
      'a.txt already exists; write only creates new files: use edit',
    );
    expect(await fail('write', { path: 'a.txt', content: 'clobber', dry_run: true })).toContain('use edit');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('keep me');
  });

  it('dry_run shows the diff and creates nothing', async () => {
    const { root, call } = await codeWorkspace();
    expect(await call('write', { path: 'n.txt', content: 'x\n', dry_run: true })).toContain('Would create n.txt');
    await expect(readFile(join(root, 'n.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('appends in chunks and never truncates', async () => {
    const { root, call } = await codeWorkspace();
    expect(await call('write_append', { path: 'big.txt', content: 'part 1\n' })).toBe(
      'Created big.txt: +7 bytes, now 7 bytes\n\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,1 @@\n+part 1',
    );
    expect(await call('write_append', { path: 'big.txt', content: 'part 2\n' })).toBe(
      'Appended to big.txt: +7 bytes, now 14 bytes\n\n--- a/big.txt\n+++ b/big.txt\n@@ -1,1 +1,2 @@\n part 1\n+part 2',
    );
    expect(await readFile(join(root, 'big.txt'), 'utf8')).toBe('part 1\npart 2\n');
  });

  it('refuses content over the size cap', async () => {
    const { root, fail } = await codeWorkspace({ 'a.txt': '1234' }, { limits: { maxFileBytes: 6 } });
    expect(await fail('write', { path: 'b.txt', content: '1234567' })).toContain('more than the 6-byte limit');
    expect(await fail('write_append', { path: 'a.txt', content: '567' })).toContain(
      'appending would make a.txt 7 bytes',
    );
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('1234');
  });
});

describe('code.edit', () => {
  it('replaces exactly one occurrence and returns the diff', async () => {
    const { root, call } = await codeWorkspace({ 'a.ts': 'const a = 1;\nconst b = 2;\n' });
    expect(await call('edit', { path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' })).toBe(
      'Edited a.ts at line 2: replaced 1 line(s) with 1\n\n--- a/a.ts\n+++ b/a.ts\n@@ -1,2 +1,2 @@\n const a = 1;\n-const b = 2;\n+const b = 3;',
    );
    expect(await readFile(join(root, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('keeps $ patterns in new_string literal', async () => {
    const { root, call } = await codeWorkspace({ 'a.txt': 'price' });
    await call('edit', { path: 'a.txt', old_string: 'price', new_string: "$& costs $1 $'" });
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe("$& costs $1 $'");
  });

  it('refuses empty, identical, missing and repeated old_string, leaving the file alone', async () => {
    const { root, fail } = await codeWorkspace({ 'a.txt': 'x = 1\nx = 1\nx = 1\n' });
    expect(await fail('edit', { path: 'a.txt', old_string: '', new_string: 'y' })).toContain(
      'old_string must not be empty; to create a file use write',
    );
    expect(await fail('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 1' })).toContain('identical');
    expect(await fail('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 2' })).toContain(
      'old_string is not unique in a.txt: it occurs 3 times (lines 1, 2, 3)',
    );
    expect(await fail('edit', { path: 'b.txt', old_string: 'a', new_string: 'b' })).toContain(
      'b.txt does not exist; use write to create it',
    );
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('x = 1\nx = 1\nx = 1\n');
  });

  it('counts overlapping occurrences as not unique', async () => {
    const { fail } = await codeWorkspace({ 'a.txt': 'aaa' });
    expect(await fail('edit', { path: 'a.txt', old_string: 'aa', new_string: 'b' })).toContain('it occurs 2 times');
  });

  it('replace_all replaces every occurrence', async () => {
    const { root, call } = await codeWorkspace({ 'a.txt': 'x = 1\ny\nx = 1\n' });
    expect(await call('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 2', replace_all: true })).toMatch(
      /^Edited a.txt at line 1: replaced 2 occurrences/,
    );
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('x = 2\ny\nx = 2\n');
  });

  it('explains a whitespace near miss with the line and the differences', async () => {
    const { fail } = await codeWorkspace({ 'a.py': 'def f():\n\treturn 1\n' });
    const message = await fail('edit', {
      path: 'a.py',
      old_string: 'def f():\n    return 1',
      new_string: 'def f():\n    return 2',
    });
    expect(message).toContain('old_string not found in a.py');
    expect(message).toContain('It matches lines 1-2 if whitespace is ignored');
    expect(message).toContain(
      'line 2: old_string "    return 1", file "\\treturn 1" (indentation: old_string has 4 spaces, the file has 1 tab)',
    );
  });

  it('points to the closest match with its line number', async () => {
    const { fail } = await codeWorkspace({
      'a.js': 'function one() {}\nfunction greet(name) {\n  return "Hello, " + name;\n}\n',
    });
    const message = await fail('edit', {
      path: 'a.js',
      old_string: 'function greet(nam) {\n  return "Hello, " + nam;',
      new_string: 'x',
    });
    expect(message).toContain('The closest match is at lines 2-3');
    expect(message).toContain('line 2: file "function greet(name) {"');
  });

  it('notices a read prefix copied into old_string', async () => {
    const { fail } = await codeWorkspace({ 'a.txt': 'alpha\nbeta\n' });
    expect(
      await fail('edit', { path: 'a.txt', old_string: `   2:${lineHash('beta')}\tbeta`, new_string: 'gamma' }),
    ).toContain('prefix of read output');
  });

  it('takes a line:hash anchor from read to pick one of several occurrences', async () => {
    const { root, call, fail } = await codeWorkspace({ 'a.txt': 'x = 1\ny\nx = 1\n' });
    const read = await call('read', { path: 'a.txt' });
    const anchor = read.split('\n')[2].split('\t')[0].trim();
    expect(anchor).toBe(`3:${lineHash('x = 1')}`);
    expect(await call('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 3', anchor })).toMatch(
      /^Edited a.txt at line 3/,
    );
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('x = 1\ny\nx = 3\n');
    // The anchored line has changed since it was read.
    expect(await fail('edit', { path: 'a.txt', old_string: 'x = 3', new_string: 'x = 4', anchor })).toContain(
      'a.txt changed since it was read: line 3 is now "x = 3"',
    );
    expect(
      await fail('edit', { path: 'a.txt', old_string: 'y', new_string: 'z', anchor: `1:${lineHash('x = 1')}` }),
    ).toContain('old_string does not start on line 1 of a.txt; it starts on line(s) 2');
  });

  it('edits a CRLF file with LF strings, keeping CRLF', async () => {
    const { root, call } = await codeWorkspace({ 'w.txt': 'one\r\ntwo\r\nthree\r\n' });
    await call('edit', { path: 'w.txt', old_string: 'one\ntwo', new_string: 'one\n2' });
    expect(await readFile(join(root, 'w.txt'), 'utf8')).toBe('one\r\n2\r\nthree\r\n');
  });

  it('dry_run shows the diff and changes nothing', async () => {
    const { root, call } = await codeWorkspace({ 'a.txt': 'old\n' });
    expect(await call('edit', { path: 'a.txt', old_string: 'old', new_string: 'new', dry_run: true })).toContain(
      'Would edit a.txt at line 1',
    );
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('old\n');
  });
});

describe('code.apply_patch', () => {
  const file = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

  it('applies every hunk of every file and returns the diff', async () => {
    const { root, call } = await codeWorkspace({ 'a.txt': file, 'b.txt': 'keep\nold\n' });
    const patch = [
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -2,3 +2,3 @@',
      ' line 2',
      '-line 3',
      '+line three',
      ' line 4',
      '@@ -17,3 +17,3 @@',
      ' line 17',
      '-line 18',
      '+line eighteen',
      ' line 19',
      '--- a/b.txt',
      '+++ b/b.txt',
      '@@ -1,2 +1,2 @@',
      ' keep',
      '-old',
      '+new',
      '--- /dev/null',
      '+++ b/c/new.txt',
      '@@ -0,0 +1,2 @@',
      '+hello',
      '+world',
      '',
    ].join('\n');
    const out = await call('apply_patch', { patch });
    expect(out.split('\n')[0]).toBe('Applied the patch: modified a.txt, modified b.txt, created c/new.txt');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(
      file.replace('line 3\n', 'line three\n').replace('line 18\n', 'line eighteen\n'),
    );
    expect(await readFile(join(root, 'b.txt'), 'utf8')).toBe('keep\nnew\n');
    expect(await readFile(join(root, 'c/new.txt'), 'utf8')).toBe('hello\nworld\n');
  });

  it('reports hunks applied at an offset and with fuzz', async () => {
    const shifted = 'added 1\nadded 2\n' + file.replace('line 8\n', 'line eight\n');
    const { root, call } = await codeWorkspace({ 'a.txt': shifted });
    const patch = [
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -2,3 +2,3 @@',
      ' line 2',
      '-line 3',
      '+line three',
      ' line 4',
      '@@ -8,5 +8,5 @@',
      ' line 8',
      ' line 9',
      '-line 10',
      '+line ten',
      ' line 11',
      ' line 12',
      '',
    ].join('\n');
    const out = await call('apply_patch', { patch });
    expect(out).toContain('a.txt: hunk 1 applied at line 4 (offset +2 line(s))');
    expect(out).toMatch(
      /a\.txt: hunk 2 applied at line 10 \(offset \+2 line\(s\), fuzz 1: ignored 1 context line\(s\) at its edges\)/,
    );
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(
      shifted.replace('line 3\n', 'line three\n').replace('line 10\n', 'line ten\n'),
    );
  });

  it('is atomic: one failing hunk leaves every file unchanged', async () => {
    const { root, fail } = await codeWorkspace({ 'a.txt': file, 'b.txt': 'keep\nold\n' });
    const patch = [
      '--- a/a.txt',
      '+++ b/a.txt',
      '@@ -2,3 +2,3 @@',
      ' line 2',
      '-line 3',
      '+line three',
      ' line 4',
      '--- a/b.txt',
      '+++ b/b.txt',
      '@@ -1,2 +1,2 @@',
      ' nothing',
      '-like',
      '+this',
      '',
    ].join('\n');
    expect(await fail('apply_patch', { patch })).toContain('hunk 1 of b.txt (@@ -1,2) does not match the file');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe(file);
    expect(await readFile(join(root, 'b.txt'), 'utf8')).toBe('keep\nold\n');
  });

  it('refuses text that is not a diff', async () => {
    const { fail } = await codeWorkspace();
    expect(await fail('apply_patch', { patch: 'just some text' })).toContain('patch holds no hunks');
  });
});

describe('code.read of a file over the size cap', () => {
  it('scans to the lines asked for, with the same hashes, cuts and paging', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => (i === 1500 ? 'w'.repeat(5000) : `log line ${i + 1}`));
    const text = lines.join('\n') + '\n';
    const { call } = await codeWorkspace(
      { 'big.log': text, 'crlf.log': lines.slice(0, 5).join('\r\n') },
      { limits: { maxFileBytes: 1000 } },
    );
    const out = await call('read', { path: 'big.log', offset: 1500, limit: 3 });
    expect(out.split('\n')).toEqual([
      `1500:${lineHash('log line 1500')}\tlog line 1500`,
      `1501:${lineHash('w'.repeat(5000))}\t${'w'.repeat(2000)}… [line cut at 2000 characters]`,
      `1502:${lineHash('log line 1502')}\tlog line 1502`,
      `(showing lines 1500-1502 of a ${Buffer.byteLength(text)}-byte file; read on with offset=1503)`,
    ]);
    expect(await call('read', { path: 'big.log', offset: 2999 })).toBe(
      `2999:${lineHash('log line 2999')}\tlog line 2999\n3000:${lineHash('log line 3000')}\tlog line 3000`,
    );
    expect(await call('read', { path: 'big.log', offset: 3001 })).toBe(
      '(big.log has 3000 lines; offset 3001 is past the end)',
    );
    expect(await call('read', { path: 'crlf.log', offset: 4 })).toBe(
      `   4:${lineHash('log line 4')}\tlog line 4\n   5:${lineHash('log line 5')}\tlog line 5`,
    );
  });
});
