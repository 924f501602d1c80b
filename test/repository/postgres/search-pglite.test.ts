import { afterAll, describe, expect, it } from 'vitest';
import { tokenize } from '../../../src/repository/bm25-text.js';
import { toolDocument, tsvectorLiteral } from '../../../src/repository/postgres/documents.js';
import { createPgliteDriver } from '../../../src/repository/postgres/driver.js';
import { MIGRATIONS } from '../../../src/repository/postgres/migrations.js';
import { PostgresToolRepository } from '../../../src/repository/postgres/postgres-repository.js';
import { closeSharedPglite, freshSchema, sharedPglite } from '../../helpers/pglite.js';
import { catalog, repositorySearchSuite, t } from '../search-suite.js';

repositorySearchSuite(
  'Postgres on PGlite',
  async () => new PostgresToolRepository({ pglite: { instance: await sharedPglite() }, schema: freshSchema() }),
  { typos: true },
);
afterAll(closeSharedPglite);

describe('search columns built in JavaScript', () => {
  it("give the tsvector PostgreSQL's own to_tsvector/setweight builds from the same terms", async () => {
    const db = await sharedPglite();
    const tools = [
      ...catalog,
      t('m.get_get_get', 'get get: a get of gets, repeated', ['get', 'Get']),
      t('bare_name', ''),
      t('m.x', 'Ünïcode wörds and digits 42 and 7even', []),
    ];
    for (const tool of tools) {
      const dot = tool.name.indexOf('.');
      const bare = dot === -1 ? tool.name : tool.name.slice(dot + 1);
      const sections = [
        tokenize(bare),
        tool.tags.flatMap((x) => tokenize(x)),
        tokenize(tool.description),
        dot === -1 ? [] : tokenize(tool.name.slice(0, dot)),
      ].map((s) => s.join(' '));
      const {
        rows: [row],
      } = await db.query<{ same: boolean; ours: string; theirs: string }>(
        `SELECT $1::tsvector = x AS same, $1::tsvector::text AS ours, x::text AS theirs FROM (SELECT
           setweight(to_tsvector('simple', $2), 'A') || setweight(to_tsvector('simple', $3), 'B') ||
           setweight(to_tsvector('simple', $4), 'C') || setweight(to_tsvector('simple', $5), 'D') AS x) s`,
        [toolDocument(tool).doc, ...sections],
      );
      expect(row.ours, tool.name).toBe(row.theirs);
      expect(row.same).toBe(true);
    }
  });

  it('stays within the limits of a tsvector (lexeme length, positions, size)', async () => {
    const db = await sharedPglite();
    const huge = [
      'a'.repeat(5000),
      ...Array.from({ length: 40_000 }, (_, i) => `w${i}`),
      ...Array.from({ length: 600 }, () => 'same'),
    ];
    const literal = tsvectorLiteral([huge, [], [], []]);
    const {
      rows: [row],
    } = await db.query<{ n: number; same: number }>(
      `SELECT length($1::tsvector) AS n, (SELECT cardinality(positions) FROM unnest($1::tsvector) WHERE lexeme = 'w1') AS same`,
      [literal],
    );
    expect(row.n).toBeGreaterThan(1000);
    expect(row.same).toBe(1);
  });
});

describe('migration 3 (typo vocabulary) on a catalog saved by migration 2', () => {
  it('fills the vocabulary from the stored tools, so misspelt names are still found', async () => {
    const db = await sharedPglite();
    const schema = freshSchema('m');
    const driver = await createPgliteDriver({ instance: db });
    const S = `"${schema}"`;
    await driver.transaction(async (tx) => {
      await tx.query(`CREATE SCHEMA ${S}`);
      for (const m of MIGRATIONS.filter((x) => x.version <= 2)) await m.up(tx, S);
      await tx.query(`CREATE TABLE ${S}.schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      await tx.query(`INSERT INTO ${S}.schema_migrations (version, name) VALUES (1, 'a'), (2, 'b')`);
      await tx.query(`INSERT INTO ${S}.manuals (name, template, utcp_version, manual_version, tool_count)
        VALUES ('weather', '{"name":"weather","call_template_type":"http"}', '1.0.0', '1.0.0', 1)`);
      // A row as version 2 of the library wrote it.
      await tx.query(
        `INSERT INTO ${S}.tools (name, manual_name, tool, tags_lower, name_words, doc)
         VALUES ('weather.get_forecast', 'weather', $1::json, '{weather}', 'get forecast',
           setweight(to_tsvector('simple', 'get forecast'), 'A') || setweight(to_tsvector('simple', 'weather'), 'B') ||
           setweight(to_tsvector('simple', 'weather forecast location'), 'C') || setweight(to_tsvector('simple', 'weather'), 'D'))`,
        [JSON.stringify(catalog[1])],
      );
    });
    await driver.close();
    const repo = new PostgresToolRepository({ pglite: { instance: db }, schema, listen: false });
    try {
      expect((await repo.searchTools('forcast', { limit: 3 })).map((x) => x.name)).toEqual(['weather.get_forecast']);
      const { rows } = await db.query<{ term: string }>(`SELECT term FROM ${S}.name_terms ORDER BY term`);
      expect(rows.map((r) => r.term)).toEqual(['forecast', 'get']);
      const { rows: versions } = await db.query<{ version: number }>(
        `SELECT version FROM ${S}.schema_migrations ORDER BY version`,
      );
      expect(versions.map((v) => v.version)).toEqual(MIGRATIONS.map((m) => m.version));
    } finally {
      await repo.close();
    }
  });
});
