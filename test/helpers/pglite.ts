/**
 * PGlite for tests. Creating a PGlite database runs initdb inside WebAssembly, which takes seconds (tens of seconds on
 * a loaded machine); starting from a dump of a fresh data directory takes a fraction of that. So the first test file
 * that needs one dumps a freshly initialised database once into node_modules/.cache (keyed by the PGlite version,
 * written atomically, so parallel files never read half a file), and every PGlite in the tests starts from it.
 * One in-memory PGlite per test file; each test gets its own schema in it.
 */
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PgliteLike } from '../../src/repository/postgres/driver.js';

const NODE_MODULES = resolve(dirname(fileURLToPath(import.meta.url)), '../../node_modules');
const CACHE_DIR = join(NODE_MODULES, '.cache/utcp-kit-tests');

let dump: Promise<Blob> | undefined;
let shared: Promise<PGlite> | undefined;
let n = 0;

/** A tarball of a freshly initialised PGlite data directory (made once per PGlite version, then read from disk). */
export function freshPgliteDump(): Promise<Blob> {
  dump ??= (async () => {
    const { version } = JSON.parse(await readFile(join(NODE_MODULES, '@electric-sql/pglite/package.json'), 'utf8'));
    const file = join(CACHE_DIR, `pglite-${version}-initdb.tar`);
    try {
      return new Blob([await readFile(file)]);
    } catch {
      const db = await PGlite.create();
      const tar = await db.dumpDataDir('none');
      await db.close();
      await mkdir(CACHE_DIR, { recursive: true });
      const part = `${file}.${process.pid}.part`;
      await writeFile(part, Buffer.from(await tar.arrayBuffer()));
      await rename(part, file).catch(async (e) => {
        await rm(part, { force: true });
        throw e;
      });
      return tar;
    }
  })();
  return dump;
}

/** A new in-memory PGlite (with pg_trgm) started from the fresh dump; `dataDir` makes it persist there. */
export async function startPglite(dataDir?: string): Promise<PGlite> {
  return PGlite.create({ dataDir, loadDataDir: await freshPgliteDump(), extensions: { pg_trgm } });
}

export function sharedPglite(): Promise<PgliteLike> {
  shared ??= startPglite();
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
