/**
 * Versioned schema migrations (docs/design/repository-postgres.md#schema). Each runs once, in order, inside one
 * transaction holding an advisory lock, so processes starting together never race. Append new versions;
 * never edit an applied one.
 */
import type { SqlDriver, SqlRunner } from './driver.js';

export interface Migration {
  version: number;
  name: string;
  /** `S` is the quoted schema name. */
  up(tx: SqlRunner, S: string): Promise<void>;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'manuals and tools',
    async up(tx, S) {
      await tx.query(`CREATE TABLE ${S}.manuals (
        name text PRIMARY KEY,
        template json NOT NULL,
        utcp_version text NOT NULL,
        manual_version text NOT NULL,
        allowed_protocols text[],
        tool_count integer NOT NULL,
        generation bigint NOT NULL DEFAULT 1,
        saved_at timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
      // json (not jsonb) keeps each document byte for byte, key order included. No foreign key to manuals:
      // every write goes through one transaction that deletes a manual's tools with it, and the bulk insert
      // stays fast without a per-row trigger.
      await tx.query(`CREATE TABLE ${S}.tools (
        seq bigserial PRIMARY KEY,
        name text NOT NULL UNIQUE,
        manual_name text NOT NULL,
        tool json NOT NULL,
        tags_lower text[] NOT NULL,
        name_words text NOT NULL,
        doc tsvector NOT NULL
      )`);
      await tx.query(`CREATE INDEX tools_manual_name_idx ON ${S}.tools (manual_name)`);
      await tx.query(`CREATE INDEX tools_doc_idx ON ${S}.tools USING gin (doc)`);
      await tx.query(`CREATE INDEX tools_tags_idx ON ${S}.tools USING gin (tags_lower)`);
    },
  },
  {
    version: 2,
    name: 'trigram index on tool names (when pg_trgm can be created)',
    async up(tx, S) {
      const T = await trigramSchema(tx);
      if (T) await tx.query(`CREATE INDEX tools_name_trgm_idx ON ${S}.tools USING gin (name_words ${T}.gin_trgm_ops)`);
    },
  },
  {
    version: 3,
    name: 'typo vocabulary of name words replaces the per-tool trigram index',
    // A trigram index over every tool's name was the costliest part of a bulk save (about 30 trigram entries per
    // tool). Names share most of their words, so misspellings are matched against the distinct words instead
    // (docs/design/repository-postgres.md#search).
    async up(tx, S) {
      await tx.query(`CREATE TABLE ${S}.name_terms (term text PRIMARY KEY)`);
      // The name's terms are the tsvector's weight-A lexemes.
      await tx.query(
        `INSERT INTO ${S}.name_terms (term)
         SELECT DISTINCT u.lexeme FROM ${S}.tools t, unnest(t.doc) AS u
         WHERE 'A' = ANY (u.weights) AND length(u.lexeme) >= 3 AND u.lexeme !~ '^[0-9]+$'`,
      );
      await tx.query(`DROP INDEX IF EXISTS ${S}.tools_name_trgm_idx`);
      await tx.query(`ALTER TABLE ${S}.tools DROP COLUMN name_words`);
      const T = await trigramSchema(tx);
      if (T) await tx.query(`CREATE INDEX name_terms_trgm_idx ON ${S}.name_terms USING gin (term ${T}.gin_trgm_ops)`);
    },
  },
  {
    version: 4,
    name: "fingerprint of each manual's tools",
    // A save whose tools match the fingerprint keeps the stored rows (docs/design/repository-postgres.md#bulk-insert).
    async up(tx, S) {
      await tx.query(`ALTER TABLE ${S}.manuals ADD COLUMN tools_hash text`);
    },
  },
];

/**
 * Creates `pg_trgm` when it is missing and allowed, and returns the quoted schema it lives in (its operator classes
 * are named qualified), or undefined when the server does not have it or refuses: search then works without typo
 * matching.
 */
async function trigramSchema(tx: SqlRunner): Promise<string | undefined> {
  await tx.query('SAVEPOINT trgm');
  try {
    await tx.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
    await tx.query('RELEASE SAVEPOINT trgm');
  } catch {
    await tx.query('ROLLBACK TO SAVEPOINT trgm');
    return undefined;
  }
  const [ext] = await tx.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
  );
  return `"${ext.schema.replace(/"/g, '""')}"`;
}

/** A migration's statement failed; the repository reports it as MIGRATION_FAILED naming the migration. */
export class MigrationFailure extends Error {
  constructor(
    readonly migration: Migration,
    override readonly cause: unknown,
  ) {
    super(`Migration ${migration.version} failed`);
  }
}

/** Fixed key of the advisory lock serialising migrations across processes. */
const MIGRATION_LOCK = 0x75746370; // 'utcp'

/**
 * Creates the schema when missing and applies the migrations not yet recorded (`migrations`, by default all of
 * them). Returns the schema version.
 */
export async function migrate(driver: SqlDriver, S: string, migrations = MIGRATIONS): Promise<number> {
  return driver.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.query(`CREATE SCHEMA IF NOT EXISTS ${S}`);
    await tx.query(`CREATE TABLE IF NOT EXISTS ${S}.schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>(`SELECT version FROM ${S}.schema_migrations`);
    const applied = new Set(rows.map((r) => Number(r.version)));
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      try {
        await m.up(tx, S);
      } catch (error) {
        throw new MigrationFailure(m, error);
      }
      await tx.query(`INSERT INTO ${S}.schema_migrations (version, name) VALUES ($1, $2)`, [m.version, m.name]);
    }
    return Math.max(0, ...migrations.map((m) => m.version), ...applied);
  });
}
