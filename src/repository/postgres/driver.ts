/**
 * The two engines behind one small interface: node-postgres (`pg`) for a PostgreSQL server, and PGlite
 * (PostgreSQL compiled to WebAssembly, in-process). Each driver module is imported only when used.
 * See docs/design/repository-postgres.md.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { UtcpError } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { lockDataDir } from './data-dir-lock.js';

/** The statements the repository runs: parameters are always bound, never spliced into SQL text. */
export interface SqlRunner {
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
}

/** A transaction: statements, plus (on a server) COPY of rows in PostgreSQL's text format. */
export interface SqlTransaction extends SqlRunner {
  /**
   * Runs `COPY … FROM STDIN` (`sql` without the `FROM` part) with `data`: lines of tab-separated, escaped values.
   * The data is pulled as the server takes it, so building the next piece overlaps with the server's work.
   * Absent on PGlite, where multi-row INSERTs cost less (docs/design/repository-postgres.md#bulk-insert).
   */
  copyFrom?(sql: string, data: Iterable<string>): Promise<void>;
}

export interface SqlDriver extends SqlRunner {
  /** Runs `fn` in one transaction (BEGIN … COMMIT, ROLLBACK on any error). */
  transaction<T>(fn: (tx: SqlTransaction) => Promise<T>): Promise<T>;
  /**
   * Listens on a channel. `onPayload` gets each notification; `onResync` is called after a lost listener
   * connection was re-established (notifications may have been missed meanwhile).
   */
  listen(channel: string, onPayload: (payload: string) => void, onResync: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Imports an optional peer, turning "not installed" into a clear typed error. */
async function importDriver<M>(specifier: string, load: () => Promise<M>, install = specifier): Promise<M> {
  try {
    return await load();
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException)?.code === 'ERR_MODULE_NOT_FOUND') {
      throw new UtcpError(
        'DEPENDENCY_MISSING',
        `The Postgres tool repository needs the package "${specifier}"; install it with npm install ${install}`,
        { cause },
      );
    }
    throw cause;
  }
}

export interface ServerDriverOptions {
  connectionString: string;
  /** Pool size. @default 4 */
  poolMax?: number;
  /** @default 10000 */
  connectTimeoutMs?: number;
  /** Server-side statement timeout. @default 120000 */
  statementTimeoutMs?: number;
  logger: Required<Logger>;
  /** Error messages as they may be logged: the connection string's secrets hidden (docs/design/repository-postgres.md#errors). */
  describeError(error: unknown): string;
}

/** A PostgreSQL server through a `pg` pool, plus one dedicated connection for LISTEN that reconnects. */
export async function createServerDriver(options: ServerDriverOptions): Promise<SqlDriver> {
  const pg = (await importDriver('pg', () => import('pg'), 'pg pg-copy-streams')).default;
  // Loaded with pg, so a missing one fails when the repository opens, not at the first bulk write
  // (docs/design/packaging.md#missing-library).
  const { from: copyFromStdin } = await importDriver(
    'pg-copy-streams',
    () => import('pg-copy-streams'),
    'pg pg-copy-streams',
  );
  const { logger, describeError: messageOf } = options;
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const clientConfig = {
    connectionString: options.connectionString,
    connectionTimeoutMillis: connectTimeoutMs,
    statement_timeout: options.statementTimeoutMs ?? 120_000,
    application_name: 'utcp-kit',
  };
  const pool = new pg.Pool({
    ...clientConfig,
    max: options.poolMax ?? 4,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
  });
  // An idle pooled connection that dies (server restart) must not crash the host; the pool replaces it.
  pool.on('error', (e) => logger.warn('Postgres tool repository: an idle connection failed', { error: messageOf(e) }));
  let closed = false;
  const listeners = new Set<{ stop(): Promise<void> }>();

  const run = async <R>(
    runner: { query: (sql: string, params?: unknown[]) => Promise<{ rows: unknown[] }> },
    sql: string,
    params?: unknown[],
  ) => (await runner.query(sql, params)).rows as R[];

  return {
    query: (sql, params) => run(pool, sql, params),
    async transaction(fn) {
      const client = await pool.connect();
      let broken = false;
      // A connection that dies while checked out (server restart, terminated backend) emits 'error' after the
      // running statement failed: without a listener that would crash the host. The statement's own error is
      // what the caller sees; this one only marks the connection as not reusable.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: (sql, params) => run(client, sql, params),
          async copyFrom(sql, data) {
            await pipeline(Readable.from(data), client.query(copyFromStdin(`${sql} FROM STDIN`)));
          },
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw error;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
    async listen(channel, onPayload, onResync) {
      let client: InstanceType<typeof pg.Client> | undefined;
      let stopped = false;
      let timer: NodeJS.Timeout | undefined;
      let delay = 100;
      const connect = async (isReconnect: boolean): Promise<void> => {
        const c = new pg.Client(clientConfig);
        c.on('notification', (n) => {
          if (n.channel === channel && n.payload !== undefined) onPayload(n.payload);
        });
        const lost = (e?: Error) => {
          if (client !== c) return;
          client = undefined;
          c.removeAllListeners('end');
          c.end().catch(() => {});
          if (stopped) return;
          logger.warn(
            'Postgres tool repository: the change listener lost its connection; reconnecting',
            e ? { error: messageOf(e) } : undefined,
          );
          schedule();
        };
        c.on('error', lost);
        c.on('end', () => lost());
        client = c;
        try {
          await c.connect();
          await c.query(`LISTEN ${quoteIdent(channel)}`);
        } catch (error) {
          if (client === c) client = undefined;
          c.removeAllListeners('end');
          await c.end().catch(() => {});
          throw error;
        }
        if (stopped) {
          client = undefined;
          c.removeAllListeners('end');
          await c.end().catch(() => {});
          return;
        }
        delay = 100;
        if (isReconnect) onResync();
      };
      const schedule = () => {
        timer = setTimeout(() => {
          timer = undefined;
          connect(true).catch((e) => {
            if (stopped) return;
            logger.warn('Postgres tool repository: reconnecting the change listener failed; retrying', {
              error: messageOf(e),
            });
            delay = Math.min(delay * 2, 5_000);
            schedule();
          });
        }, delay);
        timer.unref();
      };
      await connect(false);
      const handle = {
        async stop() {
          stopped = true;
          listeners.delete(handle);
          if (timer) clearTimeout(timer);
          const c = client;
          client = undefined;
          if (c) {
            c.removeAllListeners('end');
            await c.end().catch(() => {});
          }
        },
      };
      listeners.add(handle);
      return () => handle.stop();
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([...listeners].map((l) => l.stop()));
      await pool.end();
    },
  };
}

/** The part of a PGlite instance the repository uses (so a caller's own instance can be passed in). */
export interface PgliteLike {
  query<T>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  transaction<T>(
    fn: (tx: { query<R>(sql: string, params?: unknown[]): Promise<{ rows: R[] }> }) => Promise<T>,
  ): Promise<T>;
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface PgliteDriverOptions {
  /** A directory for persistence, or undefined for an in-memory database. */
  dataDir?: string;
  /** An open PGlite instance to use instead (it is not closed by the repository; create it with the pg_trgm extension for typo matching). */
  instance?: PgliteLike;
}

/** PGlite: one in-process database (one connection; statements are serialised by PGlite itself). */
export async function createPgliteDriver(options: PgliteDriverOptions): Promise<SqlDriver> {
  let db: PgliteLike;
  let release: (() => Promise<void>) | undefined;
  const owned = !options.instance;
  if (options.instance) db = options.instance;
  else {
    const { PGlite } = await importDriver('@electric-sql/pglite', () => import('@electric-sql/pglite'));
    const { pg_trgm } = await importDriver(
      '@electric-sql/pglite',
      () => import('@electric-sql/pglite/contrib/pg_trgm'),
    );
    // One process per data directory (docs/design/repository-postgres.md#pglite-lock).
    release = options.dataDir ? await lockDataDir(options.dataDir) : undefined;
    try {
      db = (await PGlite.create({ dataDir: options.dataDir, extensions: { pg_trgm } })) as unknown as PgliteLike;
    } catch (error) {
      await release?.();
      throw error;
    }
  }
  let closed = false;
  const unlistens = new Set<() => Promise<void>>();
  return {
    async query(sql, params) {
      return (await db.query(sql, params)).rows as never[];
    },
    transaction(fn) {
      return db.transaction((tx) =>
        fn({
          query: async (sql, params) => (await tx.query(sql, params)).rows as never[],
        }),
      );
    },
    async listen(channel, onPayload) {
      // In-process: no connection to lose, so no resync.
      quoteIdent(channel); // validates: PGlite splices the name into LISTEN
      const unlisten = await db.listen(channel, onPayload);
      const stop = async () => {
        if (!unlistens.delete(stop)) return;
        await unlisten();
      };
      unlistens.add(stop);
      return stop;
    },
    async close() {
      if (closed) return;
      closed = true;
      if (owned) {
        try {
          await db.close();
        } finally {
          await release?.();
        }
      } else await Promise.all([...unlistens].map((u) => u()));
    },
  };
}

/** Quotes an identifier already checked to be `[a-z_][a-z0-9_]*`. */
export function quoteIdent(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name))
    throw new UtcpError('INVALID_CONFIG', `Invalid SQL identifier "${name}": use lowercase letters, digits and _`);
  return `"${name}"`;
}
