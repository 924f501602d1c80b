/**
 * One process per PGlite data directory (docs/design/repository-postgres.md#pglite-lock). PGlite has no lock of its
 * own: two processes on one directory (two MCP hosts each starting `utcp serve-mcp`) corrupt it. The first open
 * creates `utcp-kit.lock` with O_EXCL (the kernel makes exactly one creator win) holding its pid and host name; a
 * later open finds it and is refused while that process lives. A lock left by a process that died is taken over.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { RepositoryError } from '../../core/errors.js';

export const LOCK_FILE = 'utcp-kit.lock';

interface LockInfo {
  pid: number;
  host: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readLock(path: string): Promise<LockInfo | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<LockInfo>;
    return typeof parsed.pid === 'number' && typeof parsed.host === 'string'
      ? { pid: parsed.pid, host: parsed.host }
      : undefined;
  } catch {
    return undefined;
  }
}

function inUse(dir: string, holder: LockInfo | undefined): RepositoryError {
  const who = holder
    ? `process ${holder.pid}${holder.host === hostname() ? '' : ` on ${holder.host}`}`
    : 'another process';
  return new RepositoryError(
    'REPOSITORY_UNAVAILABLE',
    'open',
    `The PGlite data directory ${dir} is in use by ${who}: PGlite allows one process per directory (two would corrupt it). Stop the other process, give this one its own data_dir, or share the catalog through a PostgreSQL server (tool_repository_type "postgres").`,
  );
}

/**
 * Takes the directory's lock; returns its release function.
 * @throws RepositoryError REPOSITORY_UNAVAILABLE when another live process holds it.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, LOCK_FILE);
  const me: LockInfo = { pid: process.pid, host: hostname() };
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(path, 'wx', 0o644);
      try {
        await handle.writeFile(JSON.stringify(me));
      } finally {
        await handle.close();
      }
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        // Only our own lock is removed (a takeover after we were presumed dead must not be undone).
        const holder = await readLock(path);
        if (holder?.pid === me.pid && holder.host === me.host) await unlink(path).catch(() => {});
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = await readLock(path);
      // Another host's process cannot be checked from here: refuse. A lock being written right now (no content yet)
      // is taken as held.
      if (!holder || holder.host !== me.host || alive(holder.pid) || attempt > 0) throw inUse(dir, holder);
      await unlink(path).catch(() => {});
    }
  }
  throw inUse(dir, undefined);
}
