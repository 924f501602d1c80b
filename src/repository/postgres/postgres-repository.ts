/**
 * A `ToolRepository` on PostgreSQL (a server through `pg`, or PGlite in-process): one catalog shared by every
 * process that connects to it, searched inside the database, changes announced with LISTEN/NOTIFY.
 * See docs/design/repository-postgres.md.
 */
import { createHash, randomUUID } from 'node:crypto';
import { RepositoryError, UtcpError } from '../../core/errors.js';
import { completeLogger, type Logger } from '../../core/logger.js';
import type {
  CatalogChangeEvent,
  SaveManualInfo,
  SearchOptions,
  StoredManual,
  ToolRepository,
} from '../../core/repository.js';
import type { CallTemplateBase, Tool, UtcpManual } from '../../core/types.js';
import { tokenize } from '../bm25-text.js';
import { DEFAULT_DISCOVERY_TTL_MS, type PostgresToolRepositoryOptions } from './postgres-config.js';
import { createPgliteDriver, createServerDriver, quoteIdent, type SqlDriver } from './driver.js';
import { duplicateToolName, repositoryError, SecretScrubber, type Operation } from './postgres-errors.js';
import { MIGRATIONS, MigrationFailure, migrate } from './migrations.js';
import { DOCUMENT_FORMAT, isVocabularyTerm, type TermCache, toolDocument } from './documents.js';
import { errorMessage } from '../../core/guards.js';

/** Ranking weights of ts_rank, in its order {D, C, B, A}: manual name, description, tags, tool name. */
const RANK_WEIGHTS = '{0.15,0.35,1,1}';
/** ts_rank normalisation 1: divides by 1 + log(document length), so shorter, more specific tools rank first (as BM25 does). */
const RANK_NORM = 1;
/** Tools per piece of COPY data: the next piece is built while the server stores this one. */
const COPY_BATCH = 500;
/** Tools per INSERT statement on PGlite. */
const INSERT_CHUNK = 2500;
/** A save or removal deleting at least this many tool rows, and ... */
const VACUUM_MIN_ROWS = 2000;
/** ... at least this fraction of the catalog's tools, is followed by VACUUM (ANALYZE) of the tools table. */
const VACUUM_MIN_FRACTION = 0.1;
/** Minimum pg_trgm similarity of a name word to a query term with no full-text match. */
const TYPO_SIMILARITY = 0.4;

interface Notice {
  op: 'saved' | 'removed';
  manual: string;
  origin: string;
}

/** A tsquery literal: our own terms (letters and digits only, as in the stored tsvectors), quoted, OR-ed. */
function tsQuery(terms: readonly string[]): string {
  return terms.map((t) => `'${t}'`).join(' | ');
}

/** A value in COPY's text format: backslash, tab, newline and carriage return escaped. */
function copyText(value: string): string {
  return /[\\\t\n\r]/.test(value) ? value.replace(/[\\\t\n\r]/g, (c) => COPY_ESCAPES[c]) : value;
}
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export class PostgresToolRepository implements ToolRepository {
  readonly discoveryTtlMs: number;
  readonly #options: PostgresToolRepositoryOptions;
  readonly #logger: Required<Logger>;
  readonly #S: string;
  readonly #channel: string;
  readonly #scrub: SecretScrubber;
  readonly #origin = randomUUID();
  readonly #listeners = new Set<(event: CatalogChangeEvent) => void>();
  #opening: Promise<SqlDriver> | undefined;
  #driver: SqlDriver | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  /** Schema of pg_trgm when installed (its functions are called qualified), else undefined. */
  #trgm: string | undefined;
  #closed = false;
  /** The VACUUM running after a large change, if any; close() waits for it. */
  #maintenance: Promise<void> | undefined;

  constructor(options: PostgresToolRepositoryOptions) {
    const engines = [options.connectionString !== undefined, options.pglite !== undefined].filter(Boolean).length;
    if (engines !== 1)
      throw new UtcpError('INVALID_CONFIG', 'PostgresToolRepository: give exactly one of connectionString or pglite');
    if (
      options.connectionString !== undefined &&
      (typeof options.connectionString !== 'string' || options.connectionString === '')
    ) {
      throw new UtcpError('INVALID_CONFIG', 'PostgresToolRepository: connectionString must be a non-empty string');
    }
    const schema = options.schema ?? 'utcp';
    this.#S = quoteIdent(schema);
    this.#channel = `utcp_catalog_${schema}`.slice(0, 63);
    const ttl = options.discoveryTtlMs ?? DEFAULT_DISCOVERY_TTL_MS;
    if (!(Number.isFinite(ttl) && ttl >= 0))
      throw new UtcpError(
        'INVALID_CONFIG',
        `PostgresToolRepository: discoveryTtlMs must be a non-negative number, got ${ttl}`,
      );
    this.discoveryTtlMs = ttl;
    this.#options = options;
    this.#logger = completeLogger(options.logger);
    this.#scrub = new SecretScrubber(options.connectionString);
  }

  /** Connects, migrates the schema and starts listening. Every method calls it; calling it first surfaces connection errors early. */
  async open(): Promise<void> {
    await this.#db();
  }

  #db(): Promise<SqlDriver> {
    if (this.#closed) return Promise.reject(new UtcpError('CLIENT_CLOSED', 'This PostgresToolRepository is closed'));
    if (this.#driver) return Promise.resolve(this.#driver);
    this.#opening ??= this.#connect().catch((error) => {
      this.#opening = undefined;
      throw error;
    });
    return this.#opening;
  }

  async #connect(): Promise<SqlDriver> {
    const o = this.#options;
    let driver: SqlDriver;
    try {
      driver = o.pglite
        ? await createPgliteDriver(o.pglite)
        : await createServerDriver({
            connectionString: o.connectionString!,
            poolMax: o.poolMax,
            connectTimeoutMs: o.connectTimeoutMs,
            logger: this.#logger,
            describeError: (e) => this.#scrub.message(e),
          });
    } catch (error) {
      throw repositoryError(error, { name: 'open' }, this.#scrub);
    }
    try {
      const version = await migrate(driver, this.#S);
      const latest = MIGRATIONS[MIGRATIONS.length - 1].version;
      if (version > latest)
        this.#logger.warn(
          `Postgres tool repository: the schema is at version ${version}, newer than this library's ${latest}`,
        );
      const [ext] = await driver.query<{ schema: string }>(
        `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm'`,
      );
      this.#trgm = ext ? `"${ext.schema.replace(/"/g, '""')}"` : undefined;
      if (o.listen !== false)
        this.#unlisten = await driver.listen(
          this.#channel,
          (p) => this.#onNotice(p),
          () => this.#emit({ kind: 'resync', local: false }),
        );
      if (this.#closed) throw new UtcpError('CLIENT_CLOSED', 'This PostgresToolRepository was closed while opening');
    } catch (error) {
      await this.#unlisten?.().catch(() => {});
      await driver.close().catch(() => {});
      if (error instanceof MigrationFailure)
        throw repositoryError(error.cause, { name: 'open' }, this.#scrub, {
          code: 'MIGRATION_FAILED',
          what: `Migration ${error.migration.version} ("${error.migration.name}") of schema ${this.#S} failed`,
        });
      throw repositoryError(error, { name: 'open' }, this.#scrub);
    }
    this.#driver = driver;
    return driver;
  }

  /** Runs one operation on the database, its failures typed (docs/design/repository-postgres.md#errors). */
  async #run<T>(op: Operation, fn: (db: SqlDriver) => Promise<T>): Promise<T> {
    const db = await this.#db();
    try {
      return await fn(db);
    } catch (error) {
      throw repositoryError(error, op, this.#scrub);
    }
  }

  #onNotice(payload: string): void {
    let n: Notice;
    try {
      n = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if ((n.op !== 'saved' && n.op !== 'removed') || typeof n.manual !== 'string') return;
    this.#emit({ kind: n.op, manualName: n.manual, local: n.origin === this.#origin });
  }

  #emit(event: CatalogChangeEvent): void {
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (e) {
        this.#logger.warn('A catalog change listener threw', { error: errorMessage(e) });
      }
    }
  }

  /** Every save and removal, from this process or another one connected to the same catalog. */
  subscribe(listener: (event: CatalogChangeEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async saveManual(name: string, template: CallTemplateBase, manual: UtcpManual, info?: SaveManualInfo): Promise<void> {
    const op: Operation = { name: 'saveManual', manual: name };
    const seen = new Set<string>();
    for (const tool of manual.tools) {
      if (seen.has(tool.name))
        throw new RepositoryError(
          'TOOL_EXISTS',
          op.name,
          `Cannot save manual "${name}": tool "${tool.name}" appears twice in it`,
        );
      seen.add(tool.name);
    }
    const db = await this.#db();
    try {
      this.#maintain(db, await this.#save(db, name, template, manual, info));
    } catch (error) {
      const dup = duplicateToolName(error);
      if (dup === undefined) throw repositoryError(error, op, this.#scrub);
      const [owner] = await db
        .query<{ manual_name: string }>(`SELECT manual_name FROM ${this.#S}.tools WHERE name = $1`, [dup])
        .catch(() => []);
      throw new RepositoryError(
        'TOOL_EXISTS',
        op.name,
        `Cannot save manual "${name}": tool "${dup}" is already registered${owner ? ` by manual "${owner.manual_name}"` : ''}; nothing was saved`,
        '23505',
      );
    }
  }

  async #save(
    db: SqlDriver,
    name: string,
    template: CallTemplateBase,
    manual: UtcpManual,
    info: SaveManualInfo | undefined,
  ): Promise<number> {
    const S = this.#S;
    const tools = manual.tools;
    // Each tool's JSON is written once and kept: it is both what the fingerprint covers and what COPY sends.
    const json = new Array<string>(tools.length);
    const fingerprint = createHash('sha256').update(`${DOCUMENT_FORMAT}\n`);
    for (let i = 0; i < tools.length; i++) {
      json[i] = JSON.stringify(tools[i]);
      fingerprint.update(json[i]).update('\n');
    }
    const toolsHash = fingerprint.digest('base64');
    const vocabulary = new Set<string>();
    const terms: TermCache = new Map();
    const manualName = copyText(name);
    // COPY rows, built as the server takes them (docs/design/repository-postgres.md#bulk-insert).
    function* rows(): Generator<string> {
      let out = '';
      for (let i = 0; i < tools.length; i++) {
        const d = toolDocument(tools[i], terms);
        for (const term of d.nameTerms) if (isVocabularyTerm(term)) vocabulary.add(term);
        out += `${copyText(tools[i].name)}\t${manualName}\t${copyText(json[i])}\t${copyText(d.tags)}\t${d.doc}\n`;
        if ((i + 1) % COPY_BATCH === 0) {
          yield out;
          out = '';
        }
      }
      if (out !== '') yield out;
    }
    const notice: Notice = { op: 'saved', manual: name, origin: this.#origin };
    return db.transaction(async (tx) => {
      // Locks the manual's row when it exists, so concurrent saves of one name queue up instead of interleaving
      // (a first save of a name is serialised by the upsert's unique index instead).
      const [old] = await tx.query<{ tools_hash: string | null; tool_count: number }>(
        `SELECT tools_hash, tool_count FROM ${S}.manuals WHERE name = $1 FOR UPDATE`,
        [name],
      );
      await tx.query(
        `INSERT INTO ${S}.manuals (name, template, utcp_version, manual_version, allowed_protocols, tool_count, tools_hash)
         VALUES ($1, $2::json, $3, $4, $5::text[], $6, $7)
         ON CONFLICT (name) DO UPDATE SET template = EXCLUDED.template, utcp_version = EXCLUDED.utcp_version,
           manual_version = EXCLUDED.manual_version, allowed_protocols = EXCLUDED.allowed_protocols,
           tool_count = EXCLUDED.tool_count, tools_hash = EXCLUDED.tools_hash,
           generation = ${S}.manuals.generation + 1, saved_at = clock_timestamp()`,
        [
          name,
          JSON.stringify(template),
          manual.utcp_version,
          manual.manual_version,
          info?.allowedProtocols ? [...info.allowedProtocols] : null,
          tools.length,
          toolsHash,
        ],
      );
      // The same tools as stored (a refresh of an unchanged spec): the rows stay, no dead rows are left behind.
      const unchanged = old?.tools_hash === toolsHash;
      if (!unchanged) {
        await tx.query(`DELETE FROM ${S}.tools WHERE manual_name = $1`, [name]);
        if (tools.length > 0) {
          // As the INSERT path always did: GIN merges its pending list into the index in batches of work_mem, and the
          // INSERT's function scan buffers its rows (docs/design/repository-postgres.md#bulk-insert).
          if (tools.length >= 1000) await tx.query(`SET LOCAL work_mem = '64MB'`);
          if (tx.copyFrom) await tx.copyFrom(`COPY ${S}.tools (name, manual_name, tool, tags_lower, doc)`, rows());
          else {
            // PGlite: multi-row INSERTs, the tool documents as one JSON array per chunk (split by the server, each
            // element stored as written) and the search columns as parallel text arrays, zipped by ROWS FROM.
            for (let from = 0; from < tools.length; from += INSERT_CHUNK) {
              const to = Math.min(tools.length, from + INSERT_CHUNK);
              const names: string[] = [];
              const tags: string[] = [];
              const docs: string[] = [];
              for (let i = from; i < to; i++) {
                const d = toolDocument(tools[i], terms);
                for (const term of d.nameTerms) if (isVocabularyTerm(term)) vocabulary.add(term);
                names.push(tools[i].name);
                tags.push(d.tags);
                docs.push(d.doc);
              }
              await tx.query(
                `INSERT INTO ${S}.tools (name, manual_name, tool, tags_lower, doc)
                 SELECT r.name, $1, r.tool, r.tags::text[], r.doc::tsvector
                 FROM ROWS FROM (unnest($2::text[], $3::text[], $4::text[]), json_array_elements($5::json))
                   WITH ORDINALITY AS r(name, tags, doc, tool, i)
                 ORDER BY r.i`,
                [name, names, tags, docs, `[${json.slice(from, to).join(',')}]`],
              );
            }
          }
          // Words new to the catalog; sorted, so two saves adding the same words lock them in one order.
          await tx.query(
            `INSERT INTO ${S}.name_terms (term) SELECT t FROM unnest($1::text[]) AS t ORDER BY t ON CONFLICT DO NOTHING`,
            [[...vocabulary].sort()],
          );
        }
      }
      // Delivered to listeners only when the transaction commits.
      await tx.query('SELECT pg_notify($1, $2)', [this.#channel, JSON.stringify(notice)]);
      // Rows deleted: what VACUUM has to clear.
      return unchanged || !old ? 0 : Number(old.tool_count);
    });
  }

  /**
   * After a save or removal that deleted many tool rows: VACUUM (ANALYZE) the tools table, in the background
   * (docs/design/repository-postgres.md#maintenance). Until then every search that matches a deleted row still
   * visits it (3-7x slower after a 100k-tool manual was replaced 3 times); autovacuum would clear them within about a
   * minute on a server, and PGlite has no autovacuum at all.
   */
  #maintain(db: SqlDriver, deletedRows: number): void {
    if (deletedRows < VACUUM_MIN_ROWS) return;
    const changedRows = deletedRows;
    const S = this.#S;
    const run = async () => {
      const [row] = await db.query<{ n: string | null }>(`SELECT sum(tool_count)::bigint AS n FROM ${S}.manuals`);
      if (changedRows < VACUUM_MIN_FRACTION * Number(row?.n ?? 0)) return;
      await db.query(`VACUUM (ANALYZE) ${S}.tools`);
    };
    const next = (this.#maintenance ?? Promise.resolve()).then(run).catch((error) => {
      if (!this.#closed)
        this.#logger.warn('Postgres tool repository: VACUUM after a large change failed', {
          error: this.#scrub.message(error),
        });
    });
    this.#maintenance = next;
    void next.finally(() => {
      if (this.#maintenance === next) this.#maintenance = undefined;
    });
  }

  async removeManual(name: string): Promise<boolean> {
    const S = this.#S;
    const notice: Notice = { op: 'removed', manual: name, origin: this.#origin };
    return this.#run({ name: 'removeManual', manual: name }, (db) =>
      db.transaction(async (tx) => {
        const [gone] = await tx.query<{ tool_count: number }>(
          `DELETE FROM ${S}.manuals WHERE name = $1 RETURNING tool_count`,
          [name],
        );
        if (!gone) return false;
        await tx.query(`DELETE FROM ${S}.tools WHERE manual_name = $1`, [name]);
        await tx.query('SELECT pg_notify($1, $2)', [this.#channel, JSON.stringify(notice)]);
        this.#maintain(db, Number(gone.tool_count));
        return true;
      }),
    );
  }

  async getManual(name: string): Promise<StoredManual | undefined> {
    const S = this.#S;
    // One statement, so one snapshot: the manual row and its tools always belong together.
    const [row] = await this.#run({ name: 'getManual', manual: name }, (db) =>
      db.query<{
        template: CallTemplateBase;
        utcp_version: string;
        manual_version: string;
        allowed_protocols: string[] | null;
        age_ms: number;
        tools: Tool[] | null;
      }>(
        `SELECT m.template, m.utcp_version, m.manual_version, m.allowed_protocols,
         (extract(epoch FROM clock_timestamp() - m.saved_at) * 1000)::float8 AS age_ms,
         (SELECT json_agg(t.tool ORDER BY t.seq) FROM ${S}.tools t WHERE t.manual_name = m.name) AS tools
       FROM ${S}.manuals m WHERE m.name = $1`,
        [name],
      ),
    );
    if (!row) return undefined;
    return {
      template: row.template,
      manual: { utcp_version: row.utcp_version, manual_version: row.manual_version, tools: row.tools ?? [] },
      // Age measured by the server, so clock differences between machines do not matter.
      savedAt: Date.now() - Number(row.age_ms),
      ...(row.allowed_protocols ? { allowedProtocols: row.allowed_protocols } : {}),
    };
  }

  async getManualInfo(name: string): Promise<Omit<StoredManual, 'manual'> | undefined> {
    const [row] = await this.#run({ name: 'getManualInfo', manual: name }, (db) =>
      db.query<{ template: CallTemplateBase; allowed_protocols: string[] | null; age_ms: number }>(
        `SELECT template, allowed_protocols, (extract(epoch FROM clock_timestamp() - saved_at) * 1000)::float8 AS age_ms FROM ${this.#S}.manuals WHERE name = $1`,
        [name],
      ),
    );
    if (!row) return undefined;
    return {
      template: row.template,
      savedAt: Date.now() - Number(row.age_ms),
      ...(row.allowed_protocols ? { allowedProtocols: row.allowed_protocols } : {}),
    };
  }

  async getManualNames(): Promise<string[]> {
    const rows = await this.#run({ name: 'getManualNames' }, (db) =>
      db.query<{ name: string }>(`SELECT name FROM ${this.#S}.manuals ORDER BY name`),
    );
    return rows.map((r) => r.name);
  }

  async getTool(name: string): Promise<Tool | undefined> {
    const [row] = await this.#run({ name: 'getTool' }, (db) =>
      db.query<{ tool: Tool }>(`SELECT tool FROM ${this.#S}.tools WHERE name = $1`, [name]),
    );
    return row?.tool;
  }

  async getTools(): Promise<Tool[]> {
    const rows = await this.#run({ name: 'getTools' }, (db) =>
      db.query<{ tool: Tool }>(`SELECT tool FROM ${this.#S}.tools ORDER BY seq`),
    );
    return rows.map((r) => r.tool);
  }

  searchTools(query: string, options: SearchOptions & { limit: number }): Promise<Tool[]> {
    return this.#run({ name: 'searchTools' }, (db) => this.#search(db, query, options));
  }

  async #search(db: SqlDriver, query: string, options: SearchOptions & { limit: number }): Promise<Tool[]> {
    const S = this.#S;
    const limit = options.limit > 0 ? options.limit : null;
    const tags =
      options.anyOfTagsRequired && options.anyOfTagsRequired.length > 0
        ? options.anyOfTagsRequired.map((t) => t.toLowerCase())
        : null;
    const terms = [...new Set(tokenize(query))];
    if (terms.length === 0) {
      const rows = await db.query<{ tool: Tool }>(
        `SELECT tool FROM ${S}.tools WHERE ($1::text[] IS NULL OR tags_lower && $1::text[]) ORDER BY seq LIMIT $2`,
        [tags, limit],
      );
      return rows.map((r) => r.tool);
    }
    const rows = await db.query<{ seq: string; tool: Tool }>(
      `SELECT t.seq, t.tool FROM ${S}.tools t, (SELECT $1::tsquery AS tsq) q
       WHERE t.doc @@ q.tsq AND ($2::text[] IS NULL OR t.tags_lower && $2::text[])
       ORDER BY ts_rank('${RANK_WEIGHTS}', t.doc, q.tsq, ${RANK_NORM}) DESC, t.seq
       LIMIT $3`,
      [tsQuery(terms), tags, limit],
    );
    const T = this.#trgm;
    // Typo tolerance where pg_trgm exists: when full text found too few, add tools whose name has a word that looks
    // like a query term (after the full-text hits, so they never displace a real match). The look-alikes come from
    // the vocabulary of name words, then full text finds the tools carrying them in their name (weight A).
    if (T && (limit === null ? rows.length === 0 : rows.length < limit)) {
      const more = await db.transaction(async (tx) => {
        // The operator's default threshold (0.3) lets unrelated short words in; 0.4 still catches one-letter typos.
        await tx.query(`SELECT set_config('pg_trgm.similarity_threshold', $1, true)`, [String(TYPO_SIMILARITY)]);
        return tx.query<{ seq: string; tool: Tool }>(
          `WITH alike AS (
             SELECT v.term, max(${T}.similarity(v.term, q.term)) AS sim
             FROM ${S}.name_terms v, unnest($1::text[]) AS q(term)
             WHERE v.term OPERATOR(${T}.%) q.term
             GROUP BY v.term),
           hits AS (
             SELECT t.seq, max(a.sim) AS sim
             FROM alike a JOIN ${S}.tools t ON t.doc @@ (quote_literal(a.term) || ':A')::tsquery
             WHERE ($2::text[] IS NULL OR t.tags_lower && $2::text[]) AND NOT (t.seq = ANY ($4::bigint[]))
             GROUP BY t.seq)
           SELECT t.seq, t.tool FROM hits h JOIN ${S}.tools t ON t.seq = h.seq
           ORDER BY h.sim DESC, t.seq
           LIMIT $3`,
          [terms, tags, limit === null ? null : limit - rows.length, rows.map((r) => r.seq)],
        );
      });
      rows.push(...more);
    }
    return rows.map((r) => r.tool);
  }

  /** Stops listening and closes the connections. Safe to call twice. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#listeners.clear();
    const opening = this.#opening;
    if (!this.#driver && opening) await opening.catch(() => {});
    // A VACUUM started after a large change finishes first (it is not cancellable mid-way without a second connection).
    await this.#maintenance;
    const driver = this.#driver;
    this.#driver = undefined;
    await this.#unlisten?.().catch(() => {});
    await driver?.close();
  }
}
