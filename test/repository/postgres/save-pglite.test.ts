/**
 * saveManual on PGlite (docs/design/repository-postgres.md#bulk-insert): every tool is kept byte for byte whatever
 * characters it holds, and a save whose tools are unchanged keeps the stored rows. server.test.ts runs the
 * byte-for-byte case through COPY on a real server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresToolRepository } from '../../../src/repository/postgres/postgres-repository.js';
import { closeSharedPglite, freshSchema, sharedPglite } from '../../helpers/pglite.js';
import { expectOddToolsKept, oddTool as tool } from './odd-tools.js';

// Starting PGlite takes seconds, far more on a loaded machine: done once, outside the tests' own time limit.
beforeAll(() => sharedPglite(), 180_000);
afterAll(closeSharedPglite);

const template = { name: 'm', call_template_type: 'http' };

describe('saveManual (PGlite)', () => {
  it('stores tools with tabs, newlines, backslashes, \\N, quotes and non-ASCII byte for byte, and finds them', async () => {
    const db = await sharedPglite();
    const repo = new PostgresToolRepository({ pglite: { instance: db }, schema: freshSchema('copy'), listen: false });
    try {
      await expectOddToolsKept(repo);
    } finally {
      await repo.close();
    }
  });

  it('keeps the stored rows when the tools are unchanged, and rewrites them when one changed', async () => {
    const db = await sharedPglite();
    const schema = freshSchema('same');
    const repo = new PostgresToolRepository({ pglite: { instance: db }, schema, listen: false });
    const rows = async () =>
      (await db.query<{ seq: number; name: string }>(`SELECT seq::int AS seq, name FROM "${schema}".tools ORDER BY 1`))
        .rows;
    try {
      const tools = Array.from({ length: 30 }, (_, i) => tool(`m.t${i}`, `tool number ${i}`));
      await repo.saveManual('m', template, { utcp_version: '1.0.0', manual_version: '1', tools });
      const first = await rows();
      const savedAt = (await repo.getManual('m'))!.savedAt!;

      // Same tools, new manual version and template: the manual's row changes, its tool rows stay.
      const template2 = { ...template, url: 'http://127.0.0.1:1/v2' };
      await repo.saveManual('m', template2, {
        utcp_version: '1.0.0',
        manual_version: '2',
        tools: structuredClone(tools),
      });
      expect(await rows()).toEqual(first);
      const again = await repo.getManual('m');
      expect(again?.manual.manual_version).toBe('2');
      expect(again?.template).toEqual(template2);
      expect(again!.savedAt!).toBeGreaterThanOrEqual(savedAt);
      expect(again?.manual.tools).toEqual(tools);

      // One tool changed: every row is written anew, the new text is stored and searched.
      const changed = tools.map((t, i) => (i === 7 ? tool('m.t7', 'a changed description about zebras') : t));
      await repo.saveManual('m', template2, { utcp_version: '1.0.0', manual_version: '3', tools: changed });
      const third = await rows();
      expect(third.map((r) => r.name)).toEqual(first.map((r) => r.name));
      expect(third.map((r) => r.seq)).not.toEqual(first.map((r) => r.seq));
      expect((await repo.searchTools('zebras', { limit: 3 })).map((t) => t.name)).toEqual(['m.t7']);
      expect((await repo.getManual('m'))?.manual.tools).toEqual(changed);

      // Fewer tools: also a rewrite (the fingerprint covers the whole list).
      await repo.saveManual('m', template2, { utcp_version: '1.0.0', manual_version: '4', tools: changed.slice(0, 5) });
      expect((await rows()).map((r) => r.name)).toEqual(['m.t0', 'm.t1', 'm.t2', 'm.t3', 'm.t4']);
    } finally {
      await repo.close();
    }
  });
});
