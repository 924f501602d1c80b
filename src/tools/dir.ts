/**
 * Directory descriptors for the code tools' descriptor walk (docs/design/code-tools.md#descriptor-walk): a
 * directory opened once names its entries through its descriptor, and files are opened without following a link
 * or blocking, and kept only when the descriptor shows a regular file (docs/design/code-tools.md#regular-files-only).
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { UtcpError } from '../index.js';

export const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
/** A FIFO or device never blocks the open (docs/design/code-tools.md#regular-files-only). */
export const NONBLOCK = constants.O_NONBLOCK ?? 0;
export const DIRECTORY = constants.O_DIRECTORY ?? 0;

/**
 * An open directory of the workspace. On Linux, `at(name)` is `/proc/self/fd/<fd>/<name>`: the kernel resolves it
 * inside this very directory (as `openat` would), whatever happened to the directory's path since it was opened.
 * Elsewhere it falls back to the directory's checked real path.
 */
export class Dir {
  constructor(
    readonly handle: FileHandle,
    /** Real path when opened (for messages and the non-Linux fallback). */
    readonly real: string,
    readonly byDescriptor: boolean,
  ) {}

  /** A path naming this directory itself (for readdir). */
  get path(): string {
    return this.byDescriptor ? `/proc/self/fd/${this.handle.fd}` : this.real;
  }

  /** A path naming the entry `name` of this directory. */
  at(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
      throw new UtcpError('PATH_NOT_ALLOWED', `${JSON.stringify(name)} is not a plain entry name`);
    return this.byDescriptor ? `/proc/self/fd/${this.handle.fd}/${name}` : join(this.real, name);
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

/**
 * Opens the subdirectory `name` of `dir` without following a link (a link, a file or anything else there fails
 * with ELOOP or ENOTDIR), without blocking.
 */
export async function openDirAt(dir: Dir, name: string): Promise<Dir> {
  const handle = await open(dir.at(name), constants.O_RDONLY | DIRECTORY | NOFOLLOW | NONBLOCK);
  return new Dir(handle, join(dir.real, name), dir.byDescriptor);
}

/** A regular file opened through its directory's descriptor. */
export interface RegularFile {
  handle: FileHandle;
  stats: Stats;
}

/**
 * Opens the entry `name` of `dir` for reading, following no link and without blocking, and refuses (closing it)
 * anything the descriptor shows is not a regular file: FIFOs, devices, sockets, directories.
 * @throws Error with code ENOTREGULAR for a non-regular file; the open's own error otherwise
 */
export async function openRegularAt(dir: Dir, name: string): Promise<RegularFile> {
  const handle = await open(dir.at(name), constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  const stats = await handle.stat().catch(async (error) => {
    await handle.close();
    throw error;
  });
  if (!stats.isFile()) {
    await handle.close();
    throw Object.assign(new Error(`${name} is not a regular file`), { code: 'ENOTREGULAR' });
  }
  return { handle, stats };
}

/** Reads at most `maxBytes` from the start of an open file (less when it is shorter). */
export async function readHead(handle: FileHandle, maxBytes: number): Promise<Buffer> {
  const buffer = Buffer.alloc(maxBytes);
  let at = 0;
  while (at < buffer.length) {
    const { bytesRead } = await handle.read(buffer, at, buffer.length - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return buffer.subarray(0, at);
}
