/**
 * Workspace confinement for the code tools (docs/design/code-tools.md#paths): every path a model gives is
 * resolved inside the root, and every file is opened by its checked real path and then checked again through
 * the open descriptor, so a symbolic link swapped in between the check and the open is caught.
 */
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readlink, realpath, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UtcpError } from '../index.js';

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

function refuse(message: string): UtcpError {
  return new UtcpError('PATH_NOT_ALLOWED', message);
}

const NOFOLLOW = constants.O_NOFOLLOW ?? 0;

export class Workspace {
  readonly root: string;
  #real: Promise<string> | undefined;
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
    return relative(rootReal, real).split(sep).join('/') || '.';
  }

  /**
   * Resolves a model-supplied path to an absolute real path inside the root. Refuses `..` segments, absolute
   * paths outside the root, and symbolic links (at any level) that leave the root or dangle. A path that does
   * not exist yet is checked through its deepest existing ancestor.
   * @throws UtcpError PATH_NOT_ALLOWED
   */
  async resolve(userPath: unknown): Promise<{ real: string; shown: string; rootReal: string }> {
    const rootReal = await this.rootReal();
    if (typeof userPath !== 'string' || userPath.trim() === '') throw refuse('path must be a non-empty string');
    if (userPath.includes('\0')) throw refuse('path must not contain NUL characters');
    if (userPath.split(/[\\/]+/).includes('..')) throw refuse(`path ${userPath} must not contain ".." segments`);
    // An absolute path is accepted when it names something under the root (as given or as its real path).
    let candidate = resolve(rootReal, userPath);
    if (isAbsolute(userPath) && !isInside(rootReal, candidate) && isInside(this.root, candidate))
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

  /**
   * The real path the descriptor points at now. On Linux `/proc/self/fd/N` names it; elsewhere the checked path
   * is accepted when it still names the same inode as the descriptor.
   */
  async #descriptorPath(handle: FileHandle, expected: string): Promise<string | undefined> {
    try {
      return await readlink(`/proc/self/fd/${handle.fd}`);
    } catch {
      const [a, b] = await Promise.all([handle.stat(), stat(expected).catch(() => undefined)]);
      return b && a.dev === b.dev && a.ino === b.ino ? expected : undefined;
    }
  }

  async #verify(handle: FileHandle, real: string, rootReal: string, userPath: string, created: boolean): Promise<void> {
    const actual = await this.#descriptorPath(handle, real);
    if (actual !== undefined && isInside(rootReal, actual)) return;
    // The path changed under us (a directory swapped for a link): undo a creation and refuse.
    if (created && actual !== undefined) await unlink(actual).catch(() => undefined);
    await handle.close();
    throw refuse(`path ${userPath} left the workspace while it was being opened (a symbolic link was swapped in)`);
  }

  /**
   * Opens an existing regular file for reading (`'r'`) or reading and writing (`'r+'`), following no link
   * at the last component, and checks the descriptor's real path.
   */
  async openExisting(userPath: unknown, mode: 'r' | 'r+'): Promise<OpenedFile> {
    const { real, shown, rootReal } = await this.resolve(userPath);
    await this.afterCheck?.(real);
    const flags = (mode === 'r' ? constants.O_RDONLY : constants.O_RDWR) | NOFOLLOW;
    let handle: FileHandle;
    try {
      handle = await open(real, flags);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new Error(`${shown} does not exist`);
      if (code === 'ELOOP') throw refuse(`path ${String(userPath)} became a symbolic link while it was being opened`);
      if (code === 'EISDIR') throw new Error(`${shown} is a directory; use ls to see its entries`);
      throw error;
    }
    await this.#verify(handle, real, rootReal, String(userPath), false);
    const stats = await handle.stat();
    if (stats.isDirectory()) {
      await handle.close();
      throw new Error(`${shown} is a directory; use ls to see its entries`);
    }
    if (!stats.isFile()) {
      await handle.close();
      throw new Error(`${shown} is not a regular file`);
    }
    return { handle, real, shown, stats, created: false };
  }

  /**
   * Opens a file for writing: `create` makes a new file and fails with EEXIST when one is there;
   * `append` opens for reading and appending, creating the file when missing. Parent directories are created.
   */
  async openForWrite(userPath: unknown, mode: 'create' | 'append'): Promise<OpenedFile> {
    const { real, shown, rootReal } = await this.resolve(userPath);
    await mkdir(dirname(real), { recursive: true });
    await this.afterCheck?.(real);
    let handle: FileHandle;
    let created = mode === 'create';
    try {
      if (mode === 'create') {
        handle = await open(real, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o644);
      } else {
        try {
          handle = await open(real, constants.O_RDWR | constants.O_APPEND | NOFOLLOW);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
          handle = await open(
            real,
            constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_EXCL | NOFOLLOW,
            0o644,
          );
          created = true;
        }
      }
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST')
        throw new Error(
          `${shown} already exists; write only creates new files: use edit (or apply_patch) to change it, or write_append to add to it`,
        );
      if (code === 'ELOOP')
        throw refuse(`path ${String(userPath)} is a symbolic link; write through its target's own path`);
      if (code === 'EISDIR') throw new Error(`${shown} is a directory`);
      throw error;
    }
    await this.#verify(handle, real, rootReal, String(userPath), created);
    const stats = await handle.stat();
    if (!stats.isFile()) {
      await handle.close();
      throw new Error(`${shown} is not a regular file`);
    }
    return { handle, real, shown, stats, created };
  }
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
