/** One in-memory PGlite per test file (starting one costs seconds); each test gets its own schema in it. */
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { PgliteLike } from '../../src/repository/postgres/driver.js';

let shared: Promise<PGlite> | undefined;
let n = 0;

export function sharedPglite(): Promise<PgliteLike> {
  shared ??= PGlite.create({ extensions: { pg_trgm } });
  return shared as unknown as Promise<PgliteLike>;
}

export async function closeSharedPglite(): Promise<void> {
  const db = shared;
  shared = undefined;
  if (db) await (await db).close();
}

export function freshSchema(prefix = 't'): string {
  return `${prefix}_${process.pid}_${++n}`;
}
