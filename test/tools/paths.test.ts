import { mkdir, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UtcpClient } from '../../src/index.js';
import { registerCodeTools } from '../../src/tools/index.js';
import { Workspace } from '../../src/tools/workspace.js';
import { codeWorkspace, tempDir } from './helpers.js';

describe('every path resolves inside the workspace', () => {
  it.each(['../outside.txt', 'src/../../outside.txt', 'src/../a.txt'])(
    'refuses %s (a ".." segment) for every file tool',
    async (path) => {
      const { client, fail } = await codeWorkspace({ 'a.txt': 'x', 'src/b.txt': 'y' });
      expect(await fail('read', { path })).toContain('must not contain ".." segments');
      expect(await fail('write', { path, content: 'x' })).toContain('".." segments');
      expect(await fail('edit', { path, old_string: 'x', new_string: 'y' })).toContain('".." segments');
      expect(await fail('ls', { path })).toContain('".." segments');
      await expect(client.callTool('code.read', { path })).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
    },
  );

  it('refuses absolute paths outside the root, accepts those inside', async () => {
    const outside = await tempDir('outside-');
    await writeFile(join(outside, 'secret.txt'), 'secret');
    const { root, call, fail } = await codeWorkspace({ 'a.txt': 'inside' });
    expect(await fail('read', { path: join(outside, 'secret.txt') })).toContain('is outside the workspace');
    expect(await fail('write', { path: join(outside, 'new.txt'), content: 'x' })).toContain('is outside the workspace');
    expect(await fail('grep', { pattern: 'secret', path: outside })).toContain('is outside the workspace');
    expect(await fail('bash', { command: 'pwd', cwd: outside })).toContain('is outside the workspace');
    await expect(readFile(join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await call('read', { path: join(root, 'a.txt') })).toMatch(/\tinside$/);
  });

  it('refuses symbolic links that leave the root, for reads and writes', async () => {
    const outside = await tempDir('outside-');
    await writeFile(join(outside, 'secret.txt'), 'secret');
    const { root, fail } = await codeWorkspace();
    await symlink(join(outside, 'secret.txt'), join(root, 'link.txt'));
    await symlink(outside, join(root, 'out'));
    await symlink(join(outside, 'planted.txt'), join(root, 'dangling.txt'));
    expect(await fail('read', { path: 'link.txt' })).toContain('leads outside the workspace through a symbolic link');
    expect(await fail('edit', { path: 'link.txt', old_string: 'secret', new_string: 'pwned' })).toContain(
      'leads outside the workspace',
    );
    expect(await fail('write', { path: 'out/sub/new.txt', content: 'x' })).toContain('leads outside the workspace');
    expect(await fail('write_append', { path: 'out/secret.txt', content: 'x' })).toContain(
      'leads outside the workspace',
    );
    expect(await fail('ls', { path: 'out' })).toContain('leads outside the workspace');
    expect(await fail('write', { path: 'dangling.txt', content: 'x' })).toContain('symbolic link to a missing target');
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
    await expect(readFile(join(outside, 'planted.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(readFile(join(outside, 'sub/new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('follows links that stay inside, and a root reached through a link', async () => {
    const holder = await tempDir('holder-');
    const { root, call } = await codeWorkspace({ 'real/a.txt': 'hi' });
    await symlink(join(root, 'real'), join(root, 'alias'));
    expect(await call('read', { path: 'alias/a.txt' })).toMatch(/\thi$/);
    await symlink(root, join(holder, 'ws'));
    const client = await UtcpClient.create({});
    try {
      await registerCodeTools(client, {
        root: join(holder, 'ws'),
        sandbox: 'none',
        manualName: 'viaLink',
        tools: ['read'],
      });
      expect(await client.callTool('viaLink.read', { path: 'a.txt' }).catch((e: Error) => e.message)).toContain(
        'a.txt does not exist',
      );
      expect(await client.callTool('viaLink.read', { path: join(holder, 'ws', 'real', 'a.txt') })).toMatch(/\thi$/);
    } finally {
      await client.close();
    }
  });

  it('refuses empty and NUL paths', async () => {
    const { fail } = await codeWorkspace();
    expect(await fail('read', { path: '' })).toContain('path must be a non-empty string');
    expect(await fail('read', { path: 'a\0b' })).toContain('NUL');
  });
});

describe('a symbolic link swapped in after the check is caught at open time', () => {
  async function swapped() {
    const root = await tempDir('swap-ws-');
    const outside = await tempDir('swap-out-');
    await mkdir(join(root, 'dir'));
    await writeFile(join(root, 'dir', 'file.txt'), 'inside');
    await writeFile(join(outside, 'file.txt'), 'secret');
    const ws = new Workspace(root);
    // Between the check and the open: the checked directory is replaced by a link to the outside.
    ws.afterCheck = async () => {
      ws.afterCheck = undefined;
      await rename(join(root, 'dir'), join(root, 'dir.moved'));
      await symlink(outside, join(root, 'dir'));
    };
    return { root, outside, ws };
  }

  it('for a read', async () => {
    const { ws } = await swapped();
    await expect(ws.openExisting('dir/file.txt', 'r')).rejects.toMatchObject({
      code: 'PATH_NOT_ALLOWED',
      message: expect.stringContaining('left the workspace while it was being opened'),
    });
  });

  it('for an edit (read-write open): the outside file is untouched', async () => {
    const { ws, outside } = await swapped();
    await expect(ws.openExisting('dir/file.txt', 'r+')).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
    expect(await readFile(join(outside, 'file.txt'), 'utf8')).toBe('secret');
  });

  it('for a create: the file created outside is removed again', async () => {
    const { ws, outside } = await swapped();
    await expect(ws.openForWrite('dir/new.txt', 'create')).rejects.toMatchObject({ code: 'PATH_NOT_ALLOWED' });
    await expect(readFile(join(outside, 'new.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('for a final component swapped for a link (no link is followed at open)', async () => {
    const root = await tempDir('swap-ws-');
    const outside = await tempDir('swap-out-');
    await writeFile(join(root, 'file.txt'), 'inside');
    await writeFile(join(outside, 'file.txt'), 'secret');
    const ws = new Workspace(root);
    ws.afterCheck = async () => {
      await rename(join(root, 'file.txt'), join(root, 'moved.txt'));
      await symlink(join(outside, 'file.txt'), join(root, 'file.txt'));
    };
    await expect(ws.openExisting('file.txt', 'r+')).rejects.toMatchObject({
      code: 'PATH_NOT_ALLOWED',
      message: expect.stringContaining('became a symbolic link'),
    });
  });
});
