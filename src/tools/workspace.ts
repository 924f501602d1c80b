/**
 * Workspace confinement for the code tools (docs/design/code-tools.md#paths): every path a model gives is
 * resolved inside the root, and then reached one component at a time from an open descriptor of the root, each
 * component opened through its parent's descriptor without following a link (docs/design/code-tools.md#descriptor-walk).
 * What is read, written, listed or deleted is therefore what was checked, whatever is renamed or swapped meanwhile.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UtcpError } from '../index.js';
import { DIRECTORY, Dir, NOFOLLOW, NONBLOCK, openDirAt } from './dir.js';
import { quotePath, unquotePath } from './text.js';

/** A file opened inside the workspace, checked through its descriptor. */
export interface OpenedFile {
  handle: FileHandle;
  /** Real absolute path. */
  real: string;
  /** Workspace-relative path with forward slashes, for messages. */
  shown: string;
  stats: Stats;
  /** True when this open created the file. */
  created: boolean;
}

/** Test seam: runs between the path check and the open. */
export type AfterCheckHook = (real: string) => void | Promise<void>;

function isInside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

function refuse(message: string): UtcpError {
  return new UtcpError('PATH_NOT_ALLOWED', message);
}

/** What a model-supplied path names: a directory or a regular file, opened through the descriptor walk. */
export type OpenedPath = { real: string; shown: string; rel: string; rootReal: string } & (
  | { kind: 'dir'; dir: Dir }
  /** `byDescriptor`: the file's descriptor can be named as `/proc/self/fd/<fd>` (Linux). */
  | { kind: 'file'; file: OpenedFile; byDescriptor: boolean }
);

export class Workspace {
  readonly root: string;
  #real: Promise<string> | undefined;
  #byDescriptor: Promise<boolean> | undefined;
  /** Set by tests only. */
  afterCheck: AfterCheckHook | undefined;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The real path of the root (resolved once). */
  rootReal(): Promise<string> {
    this.#real ??= realpath(this.root).catch((cause) => {
      this.#real = undefined;
      throw new UtcpError('PATH_NOT_ALLOWED', `the workspace root ${this.root} does not exist`, { cause });
    });
    return this.#real;
  }

  /** Workspace-relative display form (forward slashes). */
  shown(rootReal: string, real: string): string {
    return quotePath(relative(rootReal, real).split(sep).join('/') || '.');
  }

  /**
   * Resolves a model-supplied path to an absolute real path inside the root. Refuses `..` segments, absolute
   * paths outside the root, and symbolic links (at any level) that leave the root or dangle. A path that does
   * not exist yet is checked through its deepest existing ancestor. A path (or a segment) written as a JSON
   * string, as ls, glob and grep show unusual names, is decoded first (docs/design/code-tools.md#quoted-names).
   * @throws UtcpError PATH_NOT_ALLOWED
   */
  async resolve(userPath: unknown): Promise<{ real: string; shown: string; rootReal: string }> {
    const rootReal = await this.rootReal();
    if (typeof userPath !== 'string' || userPath.trim() === '') throw refuse('path must be a non-empty string');
    if (userPath.includes('\0')) throw refuse('path must not contain NUL characters');
    const path = unquotePath(userPath);
    if (path.includes('\0')) throw refuse('path must not contain NUL characters');
    if (path.split(/[\\/]+/).includes('..')) throw refuse(`path ${userPath} must not contain ".." segments`);
    // An absolute path is accepted when it names something under the root (as given or as its real path).
    let candidate = resolve(rootReal, path);
    if (isAbsolute(path) && !isInside(rootReal, candidate) && isInside(this.root, candidate))
      candidate = join(rootReal, relative(this.root, candidate));
    if (!isInside(rootReal, candidate)) throw refuse(`path ${userPath} is outside the workspace`);
    let real: string;
    try {
      real = await realpath(candidate);
    } catch (error) {
      if (!isMissing(error)) throw error;
      if (
        await lstat(candidate).then(
          (s) => s.isSymbolicLink(),
          () => false,
        )
      )
        throw refuse(`path ${userPath} is a symbolic link to a missing target`);
      real = await this.#resolveMissing(rootReal, candidate, userPath);
      return { real, shown: this.shown(rootReal, real), rootReal };
    }
    if (!isInside(rootReal, real)) throw refuse(`path ${userPath} leads outside the workspace through a symbolic link`);
    return { real, shown: this.shown(rootReal, real), rootReal };
  }

  async #resolveMissing(rootReal: string, candidate: string, userPath: string): Promise<string> {
    let existing = candidate;
    const rest: string[] = [];
    for (;;) {
      const parent = dirname(existing);
      if (parent === existing) throw refuse(`path ${userPath} cannot be resolved`);
      rest.unshift(basename(existing));
      existing = parent;
      let real: string;
      try {
        real = await realpath(existing);
      } catch (error) {
        if (!isMissing(error)) throw error;
        if (
          await lstat(existing).then(
            (s) => s.isSymbolicLink(),
            () => false,
          )
        )
          throw refuse(`path ${userPath} goes through a broken symbolic link`);
        continue;
      }
      if (!isInside(rootReal, real))
        throw refuse(`path ${userPath} leads outside the workspace through a symbolic link`);
      return join(real, ...rest);
    }
  }

  /** Opens the root directory. On Linux its descriptor then names every path below it (see `Dir`). */
  async openRoot(): Promise<Dir> {
    const rootReal = await this.rootReal();
    const handle = await open(rootReal, constants.O_RDONLY | DIRECTORY | NONBLOCK);
    this.#byDescriptor ??= readlink(`/proc/self/fd/${handle.fd}`).then(
      (target) => target === rootReal,
      () => false,
    );
    return new Dir(handle, rootReal, await this.#byDescriptor);
  }

  /**
   * Opens the directory at the root-relative real path `parts`, one component at a time through the previous
   * component's descriptor, following no link; `create` makes missing directories on the way. `onDir` sees each
   * directory opened (the root first) while it is open.
   * @throws UtcpError PATH_NOT_ALLOWED when a component became a link; Error when one is missing or not a directory
   */
  async openDirs(
    parts: readonly string[],
    userPath: string,
    options: { create?: boolean; onDir?: (dir: Dir, relDir: string) => void | Promise<void> } = {},
  ): Promise<Dir> {
    let dir = await this.openRoot();
    try {
      await options.onDir?.(dir, '');
      for (let i = 0; i < parts.length; i++) {
        const name = parts[i];
        let next: Dir;
        try {
          next = await openDirAt(dir, name);
        } catch (error) {
          if (errorCode(error) !== 'ENOENT' || !options.create) throw await this.#stepError(dir, name, error, userPath);
          await mkdir(dir.at(name)).catch((e) => {
            if (errorCode(e) !== 'EEXIST') throw e;
          });
          next = await openDirAt(dir, name).catch(async (e) => {
            throw await this.#stepError(dir, name, e, userPath);
          });
        }
        await dir.close();
        dir = next;
        await options.onDir?.(dir, parts.slice(0, i + 1).join('/'));
      }
      return dir;
    } catch (error) {
      await dir.close().catch(() => undefined);
      throw error;
    }
  }

  /** Turns a failed step of the descriptor walk into an error that says what was found there. */
  async #stepError(dir: Dir, name: string, error: unknown, userPath: string): Promise<Error> {
    const code = errorCode(error);
    const shown = this.shown(await this.rootReal(), join(dir.real, name));
    if (code === 'ENOENT') return new Error(`${shown} does not exist`);
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      // The checked path had a directory here: a link, or a directory again by now, means it was swapped.
      const info = await lstat(dir.at(name)).catch(() => undefined);
      if (code === 'ELOOP' || info?.isSymbolicLink() || info?.isDirectory())
        return refuse(
          `path ${userPath} left the workspace while it was being opened (a symbolic link was swapped in at ${shown})`,
        );
      return new Error(`${shown} is not a directory`);
    }
    return error instanceof Error ? error : new Error(String(error));
  }

  /** Splits a checked real path into root-relative components. */
  #parts(rootReal: string, real: string): string[] {
    const rel = relative(rootReal, real);
    return rel === '' ? [] : rel.split(sep);
  }

  /** The real path the descriptor points at now (the fallback check where `/proc` is missing). */
  async #descriptorPath(handle: FileHandle, expected: string): Promise<string | undefined> {
    try {
      return await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      const [a, b] = await Promise.all([handle.stat(), stat(expected).catch(() => undefined)]);
      return b && a.dev === b.dev && a.ino === b.ino ? expected : undefined;
    }
  }

  /** Without `/proc` the walk went by name: check where the descriptor ended up. */
  async #verify(dir: Dir, handle: FileHandle, real: string, rootReal: string, userPath: string, created: boolean) {
    if (dir.byDescriptor) return;
    const actual = await this.#descriptorPath(handle, real);
    if (actual !== undefined && isInside(rootReal, actual)) return;
    if (created && actual !== undefined) await unlink(actual).catch(() => undefined);
    await handle.close();
    throw refuse(`path ${userPath} left the workspace while it was being opened (a symbolic link was swapped in)`);
  }

  /**
   * Opens an existing regular file for reading (`'r'`) or reading and writing (`'r+'`) through the descriptor
   * walk, following no link and without blocking, and refuses anything the descriptor shows is not a regular file.
   */
  async openExisting(userPath: unknown, mode: 'r' | 'r+'): Promise<OpenedFile> {
    const { real, shown, rootReal } = await this.resolve(userPath);
    await this.afterCheck?.(real);
    const parts = this.#parts(rootReal, real);
    const name = parts.pop();
    if (name === undefined) throw new Error(`${shown} is a directory; use ls to see its entries`);
    const dir = await this.openDirs(parts, String(userPath));
    let handle: FileHandle;
    try {
      handle = await open(dir.at(name), (mode === 'r' ? constants.O_RDONLY : constants.O_RDWR) | NOFOLLOW | NONBLOCK);
      await this.#verify(dir, handle, real, rootReal, String(userPath), false);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new Error(`${shown} does not exist`);
      if (code === 'ELOOP') throw refuse(`path ${String(userPath)} became a symbolic link while it was being opened`);
      if (code === 'EISDIR') throw new Error(`${shown} is a directory; use ls to see its entries`);
      if (code === 'ENXIO') throw new Error(`${shown} is not a regular file`);
      throw error;
    } finally {
      await dir.close();
    }
    return { handle, real, shown, stats: await regularStats(handle, shown), created: false };
  }

  /**
   * Opens a file for writing: `create` makes a new file and fails with EEXIST when one is there;
   * `append` opens for reading and appending, creating the file when missing. Parent directories are created,
   * each through its parent's descriptor.
   */
  async openForWrite(userPath: unknown, mode: 'create' | 'append'): Promise<OpenedFile> {
    const { real, shown, rootReal } = await this.resolve(userPath);
    await this.afterCheck?.(real);
    const parts = this.#parts(rootReal, real);
    const name = parts.pop();
    if (name === undefined) throw new Error(`${shown} is a directory`);
    const dir = await this.openDirs(parts, String(userPath), { create: true });
    let handle: FileHandle;
    let created = mode === 'create';
    const createFlags = constants.O_CREAT | constants.O_EXCL | NOFOLLOW | NONBLOCK;
    try {
      if (mode === 'create') {
        handle = await open(dir.at(name), constants.O_WRONLY | createFlags, 0o644);
      } else {
        try {
          handle = await open(dir.at(name), constants.O_RDWR | constants.O_APPEND | NOFOLLOW | NONBLOCK);
        } catch (error) {
          if (errorCode(error) !== 'ENOENT') throw error;
          handle = await open(dir.at(name), constants.O_RDWR | constants.O_APPEND | createFlags, 0o644);
          created = true;
        }
      }
      await this.#verify(dir, handle, real, rootReal, String(userPath), created);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST')
        throw new Error(
          `${shown} already exists; write only creates new files: use edit (or apply_patch) to change it, or write_append to add to it`,
        );
      if (code === 'ELOOP')
        throw refuse(`path ${String(userPath)} is a symbolic link; write through its target's own path`);
      if (code === 'EISDIR') throw new Error(`${shown} is a directory`);
      if (code === 'ENXIO') throw new Error(`${shown} is not a regular file`);
      throw error;
    } finally {
      await dir.close();
    }
    return { handle, real, shown, stats: await regularStats(handle, shown), created };
  }

  /**
   * Opens what a path names for listing or searching: a directory, or a regular file (read-only). `onDir` sees
   * every directory on the way (the root first), e.g. to load ignore rules.
   */
  async openPath(userPath: unknown, onDir?: (dir: Dir, relDir: string) => void | Promise<void>): Promise<OpenedPath> {
    const { real, shown, rootReal } = await this.resolve(userPath ?? '.');
    await this.afterCheck?.(real);
    const parts = this.#parts(rootReal, real);
    const rel = parts.join('/');
    const name = parts.pop();
    const parent = await this.openDirs(parts, String(userPath), { onDir });
    if (name === undefined) return { kind: 'dir', dir: parent, real, shown, rel, rootReal };
    let handle: FileHandle;
    try {
      handle = await open(parent.at(name), constants.O_RDONLY | NOFOLLOW | NONBLOCK);
    } catch (error) {
      await parent.close();
      const code = errorCode(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new Error(`${shown} does not exist`);
      if (code === 'ELOOP') throw refuse(`path ${String(userPath)} became a symbolic link while it was being opened`);
      if (code === 'ENXIO') throw new Error(`${shown} is not a regular file or directory`);
      throw error;
    }
    const parentReal = parent.real;
    await parent.close();
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      const dir = new Dir(handle, join(parentReal, name), parent.byDescriptor);
      await onDir?.(dir, rel);
      return { kind: 'dir', dir, real, shown, rel, rootReal };
    }
    if (!stats.isFile()) {
      await handle.close();
      throw new Error(`${shown} is not a regular file or directory`);
    }
    const file = { handle, real, shown, stats, created: false };
    return { kind: 'file', file, byDescriptor: parent.byDescriptor, real, shown, rel, rootReal };
  }

  /**
   * Deletes an opened file: its directory is reached again through the descriptor walk, and the entry is removed
   * only while it is still the very file that was opened (same device and inode).
   * @throws UtcpError PATH_NOT_ALLOWED when the entry is no longer that file
   */
  async remove(file: OpenedFile): Promise<void> {
    const rootReal = await this.rootReal();
    const parts = this.#parts(rootReal, file.real);
    const name = parts.pop();
    if (name === undefined) throw refuse('the workspace root cannot be deleted');
    const dir = await this.openDirs(parts, file.shown);
    try {
      const now = await lstat(dir.at(name)).catch(() => undefined);
      if (!now || now.dev !== file.stats.dev || now.ino !== file.stats.ino)
        throw refuse(`${file.shown} was moved or replaced while it was being changed; it was not deleted`);
      await unlink(dir.at(name));
    } finally {
      await dir.close();
    }
  }
}

/** The descriptor's stats, when it is a regular file; else the handle is closed and an error names what it is. */
async function regularStats(handle: FileHandle, shown: string): Promise<Stats> {
  const stats = await handle.stat();
  if (stats.isFile()) return stats;
  await handle.close();
  if (stats.isDirectory()) throw new Error(`${shown} is a directory; use ls to see its entries`);
  throw new Error(`${shown} is not a regular file`);
}

/** Reads a whole opened file (at most `maxBytes`). */
export async function readAll(file: OpenedFile, maxBytes: number): Promise<Buffer> {
  if (file.stats.size > maxBytes)
    throw new Error(`${file.shown} is ${file.stats.size} bytes, more than the ${maxBytes}-byte limit`);
  const buffer = Buffer.alloc(file.stats.size);
  let at = 0;
  while (at < buffer.length) {
    const { bytesRead } = await file.handle.read(buffer, at, buffer.length - at, at);
    if (bytesRead === 0) break;
    at += bytesRead;
  }
  return buffer.subarray(0, at);
}

/** Replaces the whole content of a file opened with `'r+'`, through its descriptor. */
export async function rewrite(file: OpenedFile, content: string): Promise<void> {
  const bytes = Buffer.from(content, 'utf8');
  await file.handle.truncate(0);
  let at = 0;
  while (at < bytes.length) {
    const { bytesWritten } = await file.handle.write(bytes, at, bytes.length - at, at);
    at += bytesWritten;
  }
}

/**
 * True when the bytes look binary (a NUL byte, or invalid UTF-8, in the first 8 KiB). `truncated` says the bytes
 * are the start of something longer, so a sequence cut at their end is not an error.
 */
export function looksBinary(bytes: Buffer, truncated = bytes.length > 8192): boolean {
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(
      truncated || head.length < bytes.length ? trimPartial(head) : head,
    );
    return false;
  } catch {
    return true;
  }
}

/** Drops a UTF-8 sequence cut at the end of a slice. */
function trimPartial(head: Buffer): Buffer {
  let end = head.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = head[end - i];
    if ((b & 0xc0) === 0x80) continue; // continuation byte
    if (b >= 0xc0) end -= i; // lead byte of a cut sequence
    break;
  }
  return head.subarray(0, end);
}
