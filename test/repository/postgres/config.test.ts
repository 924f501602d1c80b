import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { UtcpClient } from '../../../src/index.js';
import { startPglite } from '../../helpers/pglite.js';

describe('tool_repository config (postgres, pglite)', () => {
  it('names each bad key', async () => {
    const err = await UtcpClient.create({
      tool_repository: { tool_repository_type: 'postgres', schema: 'Bad-Name', pool_max: 0, colour: 'red' },
    }).catch((e) => e);
    expect(err).toMatchObject({ code: 'INVALID_CONFIG' });
    expect(err.message).toMatch(/tool_repository\.connection_string: required/);
    expect(err.message).toMatch(/tool_repository\.schema/);
    expect(err.message).toMatch(/tool_repository\.pool_max/);
    expect(err.message).toMatch(/tool_repository\.colour: unknown key/);
    await expect(
      UtcpClient.create({ tool_repository: { tool_repository_type: 'pglite', discovery_ttl_seconds: -1 } }),
    ).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/discovery_ttl_seconds/) });
    await expect(UtcpClient.create({ tool_repository: { tool_repository_type: 'mongo' } })).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/"postgres" or "pglite"/),
    });
  });

  it('refuses a connection_string that is not a postgres URL with INVALID_CONFIG, without echoing it', async () => {
    for (const value of ['base', 'host=/tmp dbname=x password=s3cret-pw', 'mysql://u:s3cret-pw@h/db']) {
      const err = await UtcpClient.create({
        tool_repository: { tool_repository_type: 'postgres', connection_string: '${DB}' },
        variables: { DB: value },
      }).catch((e) => e);
      expect(err).toMatchObject({ code: 'INVALID_CONFIG' });
      expect(err.message).toMatch(/tool_repository\.connection_string: must be a postgres:\/\/ or postgresql:\/\/ URL/);
      expect(err.message).not.toContain('s3cret');
    }
  });

  it("substitutes ${DATABASE_URL} from the client's variables and says which one is missing", async () => {
    const config = { tool_repository: { tool_repository_type: 'postgres', connection_string: '${DATABASE_URL}' } };
    await expect(UtcpClient.create(config, { env: {} })).rejects.toMatchObject({
      code: 'MISSING_VARIABLE',
      message: expect.stringMatching(/DATABASE_URL/),
    });
  });

  it('holds the PGlite data directory for one process: a second is refused saying so, a dead holder is taken over', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'utcp-pglite-lock-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await (await startPglite(join(dir, 'catalog'))).close();
    const config = { tool_repository: { tool_repository_type: 'pglite', data_dir: join(dir, 'catalog') } };
    // Another process (the built package) opens the directory and keeps it.
    const script = `const { UtcpClient } = await import(${JSON.stringify(new URL('../../../dist/index.js', import.meta.url).href)});
      const c = await UtcpClient.create(${JSON.stringify(config)});
      process.stdout.write('ready\\n');
      process.stdin.on('end', async () => { await c.close(); process.exit(0); }).resume();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    onTestFinished(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      child.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
    });
    const refused = await UtcpClient.create(config).catch((e) => e);
    expect(refused).toMatchObject({ code: 'REPOSITORY_UNAVAILABLE', operation: 'open' });
    expect(refused.message).toMatch(
      new RegExp(`is in use by process ${child.pid}: PGlite allows one process per directory`),
    );
    // The holder dies without closing (kill -9): its lock is stale and the next open takes it over.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const next = await UtcpClient.create(config);
    try {
      expect(await next.getManualNames()).toEqual([]);
      // Within one process too: a second client on the same directory is refused while the first holds it.
      await expect(UtcpClient.create(config)).rejects.toMatchObject({ code: 'REPOSITORY_UNAVAILABLE' });
    } finally {
      await next.close();
    }
    // Closed: the directory is free again.
    await (await UtcpClient.create(config)).close();
  }, 60_000);

  describe('pglite with a data directory', () => {
    let dir: string;
    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('keeps the catalog across clients: the second one finds and calls the tool without registering', async () => {
      dir = await mkdtemp(join(tmpdir(), 'utcp-pglite-'));
      // The data directory starts as a fresh database (from the tests' initdb dump: running initdb again costs seconds);
      // the library then migrates it and the two clients open it from disk like any existing catalog.
      await (await startPglite(join(dir, 'catalog'))).close();
      const config = { tool_repository: { tool_repository_type: 'pglite', data_dir: 'catalog' } };
      const manual = {
        utcp_version: '1.0.0',
        manual_version: '1.0.0',
        tools: [
          {
            name: 'readme',
            description: 'The notes text',
            tags: ['docs'],
            inputs: {},
            tool_call_template: { call_template_type: 'text', content: 'hello from the catalog' },
          },
        ],
      };
      const first = await UtcpClient.create(
        {
          ...config,
          manual_call_templates: [{ name: 'notes', call_template_type: 'text', content: JSON.stringify(manual) }],
        },
        { rootDir: dir },
      );
      expect(first.initialRegistrations[0]).toMatchObject({ success: true });
      await first.close();
      const second = await UtcpClient.create(config, { rootDir: dir });
      try {
        expect(second.initialRegistrations).toEqual([]);
        expect(await second.getManualNames()).toEqual(['notes']);
        const [hit] = await second.searchTools('notes text', 1);
        expect(hit.name).toBe('notes.readme');
        expect(await second.callTool(hit.name)).toBe('hello from the catalog');
      } finally {
        await second.close();
      }
    }, 180_000); // PGlite starts: seconds each on a loaded machine
  });
});
