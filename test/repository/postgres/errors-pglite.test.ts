/**
 * Database failures surface as typed RepositoryErrors (docs/design/repository-postgres.md#errors), on PGlite:
 * duplicate tool names and a failed migration. Connection failures are tested against a real server
 * (server.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepositoryError } from '../../../src/index.js';
import { PostgresToolRepository } from '../../../src/repository/postgres/postgres-repository.js';
import { closeSharedPglite, freshSchema, sharedPglite } from '../../helpers/pglite.js';

// Starting PGlite takes seconds, far more on a loaded machine: done once, outside the tests' own time limit.
beforeAll(() => sharedPglite(), 180_000);
afterAll(closeSharedPglite);

const tool = (name: string, description = name) => ({
  name,
  description,
  tags: [],
  inputs: {},
  outputs: {},
  tool_call_template: { call_template_type: 'http' },
});
const manual = (version: string, names: string[]) => ({
  utcp_version: '1.0.0',
  manual_version: version,
  tools: names.map((n) => tool(n)),
});

async function repo(schema = freshSchema('err')) {
  return new PostgresToolRepository({ pglite: { instance: await sharedPglite() }, schema, listen: false });
}

describe('typed repository errors (PGlite)', () => {
  it('a tool name registered by another manual: TOOL_EXISTS naming the tool and both manuals, nothing saved', {
    timeout: 120_000,
  }, async () => {
    const r = await repo();
    try {
      await r.saveManual('owner', { name: 'owner', call_template_type: 'http' }, manual('1', ['owner.taken']));
      await r.saveManual('big', { name: 'big', call_template_type: 'http' }, manual('1', ['big.a']));
      // The colliding tool sits in a later insert chunk of a large save.
      const names = Array.from({ length: 6000 }, (_, i) => (i === 5000 ? 'owner.taken' : `big.t${i}`));
      const err = await r
        .saveManual('big', { name: 'big', call_template_type: 'http' }, manual('2', names))
        .catch((e) => e);
      expect(err).toBeInstanceOf(RepositoryError);
      expect(err).toMatchObject({ code: 'TOOL_EXISTS', operation: 'saveManual', dbCode: '23505' });
      expect(err.message).toBe(
        'Cannot save manual "big": tool "owner.taken" is already registered by manual "owner"; nothing was saved',
      );
      const big = await r.getManual('big');
      expect(big?.manual.manual_version).toBe('1');
      expect(big?.manual.tools.map((t) => t.name)).toEqual(['big.a']);
      expect((await r.getTools()).map((t) => t.name)).toEqual(['owner.taken', 'big.a']);
    } finally {
      await r.close();
    }
  });

  it('a tool name twice in one manual: TOOL_EXISTS before anything is written', async () => {
    const r = await repo();
    try {
      const err = await r
        .saveManual('dup', { name: 'dup', call_template_type: 'http' }, manual('1', ['dup.a', 'dup.b', 'dup.a']))
        .catch((e) => e);
      expect(err).toBeInstanceOf(RepositoryError);
      expect(err).toMatchObject({ code: 'TOOL_EXISTS', operation: 'saveManual' });
      expect(err.message).toBe('Cannot save manual "dup": tool "dup.a" appears twice in it');
      expect(await r.getManual('dup')).toBeUndefined();
    } finally {
      await r.close();
    }
  });

  it('a migration that fails: MIGRATION_FAILED naming the migration and schema, with the SQLSTATE', async () => {
    const db = await sharedPglite();
    const schema = freshSchema('mig');
    // Someone else's table where migration 1 creates ours.
    await db.query(`CREATE SCHEMA "${schema}"`);
    await db.query(`CREATE TABLE "${schema}".tools (id int)`);
    const r = await repo(schema);
    try {
      const err = await r.open().catch((e) => e);
      expect(err).toBeInstanceOf(RepositoryError);
      expect(err).toMatchObject({ code: 'MIGRATION_FAILED', operation: 'open', dbCode: '42P07' });
      expect(err.message).toMatch(
        new RegExp(`^Migration 1 \\("manuals and tools"\\) of schema "${schema}" failed: .*tools.* already exists`),
      );
      // Nothing of the failed migration stayed behind.
      const { rows } = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1 AND tablename <> 'tools'`,
        [schema],
      );
      expect(rows[0].n).toBe(0);
      // Every later call reports the same, typed.
      await expect(r.getManualNames()).rejects.toMatchObject({ code: 'MIGRATION_FAILED' });
    } finally {
      await r.close();
    }
  });
});
