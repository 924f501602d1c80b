import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient, type JsonObject } from '../../src/index.js';
import { createWorkspaceTools, type WorkspaceToolsOptions } from '../../examples/coding-agent/tools.js';

async function tempDir(prefix: string): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function workspace(files: Record<string, string> = {}, options?: WorkspaceToolsOptions) {
  const root = await tempDir('ws-');
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    await writeFile(join(root, path), content);
  }
  const tools = createWorkspaceTools(root, options);
  const run = (name: string, args: JsonObject) => {
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw new Error(`no tool ${name}`);
    return Promise.resolve(tool.handler(args, { signal: new AbortController().signal }));
  };
  return { root, run };
}

describe('read', () => {
  it('returns numbered lines', async () => {
    const { run } = await workspace({ 'a.txt': 'alpha\nbeta\n' });
    expect(await run('read', { path: 'a.txt' })).toBe('   1\talpha\n   2\tbeta');
  });

  it('pages with offset and limit and says where to read on', async () => {
    const { run } = await workspace({ 'a.txt': 'l1\nl2\nl3\nl4\nl5\n' });
    expect(await run('read', { path: 'a.txt', offset: 2, limit: 2 })).toBe('   2\tl2\n   3\tl3\n(showing lines 2-3 of 5; read on with offset=4)');
  });

  it('reports an offset past the end', async () => {
    const { run } = await workspace({ 'a.txt': 'one\n' });
    expect(await run('read', { path: 'a.txt', offset: 9 })).toBe('(a.txt has 1 lines; offset 9 is past the end)');
  });

  it('says when a file is empty', async () => {
    const { run } = await workspace({ 'e.txt': '' });
    expect(await run('read', { path: 'e.txt' })).toBe('(e.txt is empty)');
  });

  it('caps the output and gives the next offset', async () => {
    const { run } = await workspace({ 'big.txt': Array.from({ length: 100 }, (_, i) => `line ${i + 1} ${'x'.repeat(40)}`).join('\n') }, { maxReadChars: 200 });
    const out = (await run('read', { path: 'big.txt' })) as string;
    const lines = out.split('\n');
    expect(lines.slice(0, -1).every((l) => /^\s+\d+\t/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/^\(output capped at 200 characters: showing lines 1-(\d+) of 100; read on with offset=(\d+)\)$/);
    const [, last, next] = /lines 1-(\d+) of 100; read on with offset=(\d+)/.exec(lines.at(-1)!)!;
    expect(Number(next)).toBe(Number(last) + 1);
    expect(lines.length - 1).toBe(Number(last));
  });

  it('cuts very long lines', async () => {
    const { run } = await workspace({ 'wide.txt': 'y'.repeat(50) }, { maxLineChars: 10 });
    expect(await run('read', { path: 'wide.txt' })).toBe(`   1\t${'y'.repeat(10)}… [line cut at 10 characters]`);
  });

  it('refuses files over the size cap', async () => {
    const { run } = await workspace({ 'big.bin': 'z'.repeat(100) }, { maxFileBytes: 50 });
    await expect(run('read', { path: 'big.bin' })).rejects.toThrow('big.bin is 100 bytes, more than the 50-byte limit');
  });

  it('refuses binary files', async () => {
    const { run } = await workspace({ 'x.bin': 'ab\0cd' });
    await expect(run('read', { path: 'x.bin' })).rejects.toThrow('looks like a binary file');
  });

  it('points to list for a directory', async () => {
    const { run } = await workspace({ 'src/a.ts': '' });
    await expect(run('read', { path: 'src' })).rejects.toThrow('src is a directory; use list');
  });

  it('reports a missing file', async () => {
    const { run } = await workspace();
    await expect(run('read', { path: 'nope.txt' })).rejects.toThrow('nope.txt does not exist');
  });

  it('rejects a non-integer offset', async () => {
    const { run } = await workspace({ 'a.txt': 'x' });
    await expect(run('read', { path: 'a.txt', offset: 0 })).rejects.toThrow('offset must be a positive integer');
  });
});

describe('list', () => {
  it('lists sorted entries with a slash after directories', async () => {
    const { run } = await workspace({ 'b.txt': '', 'a/x.txt': '' });
    expect(await run('list', {})).toBe('a/\nb.txt');
    expect(await run('list', { path: 'a' })).toBe('x.txt');
  });

  it('caps the number of entries', async () => {
    const { run } = await workspace({ '1': '', '2': '', '3': '' }, { maxListEntries: 2 });
    expect(await run('list', { path: '.' })).toBe('1\n2\n(1 more entries not shown)');
  });
});

describe('write', () => {
  it('creates a new file and its parent directories', async () => {
    const { root, run } = await workspace();
    expect(await run('write', { path: 'src/new.ts', content: 'export {};\n' })).toBe('Created src/new.ts (11 bytes, 1 lines)');
    expect(await readFile(join(root, 'src/new.ts'), 'utf8')).toBe('export {};\n');
  });

  it('refuses to overwrite and points to edit', async () => {
    const { root, run } = await workspace({ 'a.txt': 'keep me' });
    await expect(run('write', { path: 'a.txt', content: 'clobber' })).rejects.toThrow('a.txt already exists; write only creates new files, use edit to change it');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('keep me');
  });

  it('refuses content over the size cap', async () => {
    const { root, run } = await workspace({}, { maxFileBytes: 4 });
    await expect(run('write', { path: 'a.txt', content: '12345' })).rejects.toThrow('content is 5 bytes, more than the 4-byte limit');
    await expect(readFile(join(root, 'a.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('edit', () => {
  it('replaces a string that occurs exactly once', async () => {
    const { root, run } = await workspace({ 'a.ts': 'const a = 1;\nconst b = 2;\n' });
    expect(await run('edit', { path: 'a.ts', old_string: 'const b = 2;', new_string: 'const b = 3;' })).toBe('Edited a.ts at line 2: replaced 1 line(s) with 1');
    expect(await readFile(join(root, 'a.ts'), 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('keeps $ patterns in new_string literal', async () => {
    const { root, run } = await workspace({ 'a.txt': 'price' });
    await run('edit', { path: 'a.txt', old_string: 'price', new_string: "$& costs $1 $'" });
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe("$& costs $1 $'");
  });

  it('rejects an empty old_string', async () => {
    const { run } = await workspace({ 'a.txt': 'x' });
    await expect(run('edit', { path: 'a.txt', old_string: '', new_string: 'y' })).rejects.toThrow('old_string must not be empty; to create a file use write');
  });

  it('reports old_string not found', async () => {
    const { run } = await workspace({ 'a.txt': 'hello' });
    await expect(run('edit', { path: 'a.txt', old_string: 'bye', new_string: 'x' })).rejects.toThrow('old_string not found in a.txt');
  });

  it('reports a non-unique old_string with its count and leaves the file alone', async () => {
    const { root, run } = await workspace({ 'a.txt': 'x = 1\nx = 1\nx = 1\n' });
    await expect(run('edit', { path: 'a.txt', old_string: 'x = 1', new_string: 'x = 2' })).rejects.toThrow('old_string is not unique in a.txt: it occurs 3 times');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('x = 1\nx = 1\nx = 1\n');
  });

  it('counts overlapping occurrences as not unique', async () => {
    const { run } = await workspace({ 'a.txt': 'aaa' });
    await expect(run('edit', { path: 'a.txt', old_string: 'aa', new_string: 'b' })).rejects.toThrow('it occurs 2 times');
  });

  it('refuses files over the size cap', async () => {
    const { run } = await workspace({ 'a.txt': 'a'.repeat(20) }, { maxFileBytes: 10 });
    await expect(run('edit', { path: 'a.txt', old_string: 'a'.repeat(20), new_string: 'b' })).rejects.toThrow('a.txt is 20 bytes, more than the 10-byte limit');
  });

  it('refuses an edit that would grow the file past the cap', async () => {
    const { root, run } = await workspace({ 'a.txt': 'short' }, { maxFileBytes: 10 });
    await expect(run('edit', { path: 'a.txt', old_string: 'short', new_string: 'much too long' })).rejects.toThrow('the edit would make a.txt 13 bytes, more than the 10-byte limit');
    expect(await readFile(join(root, 'a.txt'), 'utf8')).toBe('short');
  });

  it('points to write when the file does not exist', async () => {
    const { run } = await workspace();
    await expect(run('edit', { path: 'a.txt', old_string: 'a', new_string: 'b' })).rejects.toThrow('a.txt does not exist; use write to create it');
  });

  it('rejects an identical replacement', async () => {
    const { run } = await workspace({ 'a.txt': 'same' });
    await expect(run('edit', { path: 'a.txt', old_string: 'same', new_string: 'same' })).rejects.toThrow('new_string is identical to old_string');
  });
});

describe('workspace confinement', () => {
  it.each(['../outside.txt', 'src/../../outside.txt', 'src/../a.txt'])('rejects %s (a ".." segment)', async (path) => {
    const { run } = await workspace({ 'a.txt': 'x', 'src/b.txt': 'y' });
    await expect(run('read', { path })).rejects.toThrow('must not contain ".." segments');
  });

  it('rejects an absolute path outside the root', async () => {
    const outside = await tempDir('outside-');
    await writeFile(join(outside, 'secret.txt'), 'secret');
    const { run } = await workspace();
    await expect(run('read', { path: join(outside, 'secret.txt') })).rejects.toThrow('is outside the workspace');
    await expect(run('write', { path: join(outside, 'new.txt'), content: 'x' })).rejects.toThrow('is outside the workspace');
    await expect(readFile(join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('accepts an absolute path inside the root', async () => {
    const { root, run } = await workspace({ 'a.txt': 'inside' });
    expect(await run('read', { path: join(root, 'a.txt') })).toBe('   1\tinside');
  });

  it('rejects a symlinked file that points outside', async () => {
    const outside = await tempDir('outside-');
    await writeFile(join(outside, 'secret.txt'), 'secret');
    const { root, run } = await workspace();
    await symlink(join(outside, 'secret.txt'), join(root, 'link.txt'));
    await expect(run('read', { path: 'link.txt' })).rejects.toThrow('leads outside the workspace through a symbolic link');
    await expect(run('edit', { path: 'link.txt', old_string: 'secret', new_string: 'pwned' })).rejects.toThrow('leads outside the workspace');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });

  it('rejects writing through a symlinked directory that points outside', async () => {
    const outside = await tempDir('outside-');
    const { root, run } = await workspace();
    await symlink(outside, join(root, 'out'));
    await expect(run('write', { path: 'out/sub/new.txt', content: 'x' })).rejects.toThrow('leads outside the workspace through a symbolic link');
    await expect(run('list', { path: 'out' })).rejects.toThrow('leads outside the workspace');
    await expect(readFile(join(outside, 'sub/new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('rejects writing to a dangling symlink', async () => {
    const outside = await tempDir('outside-');
    const { root, run } = await workspace();
    await symlink(join(outside, 'planted.txt'), join(root, 'dangling.txt'));
    await expect(run('write', { path: 'dangling.txt', content: 'x' })).rejects.toThrow('symbolic link to a missing target');
    await expect(readFile(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('follows a symlink that stays inside the root', async () => {
    const { root, run } = await workspace({ 'real/a.txt': 'hi' });
    await symlink(join(root, 'real'), join(root, 'alias'));
    expect(await run('read', { path: 'alias/a.txt' })).toBe('   1\thi');
  });

  it('works when the root itself is reached through a symlink', async () => {
    const { root } = await workspace({ 'a.txt': 'via link' });
    const holder = await tempDir('holder-');
    await symlink(root, join(holder, 'ws'));
    const tools = createWorkspaceTools(join(holder, 'ws'));
    const read = tools.find((t) => t.name === 'read')!;
    expect(await read.handler({ path: 'a.txt' }, { signal: new AbortController().signal })).toBe('   1\tvia link');
  });

  it('rejects empty and NUL paths', async () => {
    const { run } = await workspace();
    await expect(run('read', { path: '' })).rejects.toThrow('path must be a non-empty string');
    await expect(run('read', { path: 'a\0b' })).rejects.toThrow('NUL');
  });
});

describe('through a UtcpClient', () => {
  it('registers as workspace.* tools and reports failures as tool errors', async () => {
    const { root } = await workspace({ 'a.txt': 'x' });
    const client = await UtcpClient.create({});
    onTestFinished(() => client.close());
    const result = await client.registerFunctions('workspace', createWorkspaceTools(root));
    expect(result.success).toBe(true);
    expect((await client.getTools()).map((t) => t.name).sort()).toEqual(['workspace.edit', 'workspace.list', 'workspace.read', 'workspace.write']);
    expect(await client.callTool('workspace.read', { path: 'a.txt' })).toBe('   1\tx');
    await expect(client.callTool('workspace.read', { path: '../etc/passwd' })).rejects.toMatchObject({ code: 'TOOL_ERROR', message: expect.stringContaining('".." segments') });
    await expect(client.callTool('workspace.read', {})).rejects.toMatchObject({ code: 'INVALID_ARGUMENTS' });
  });
});
