import { closeSync, constants, fstatSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { UtcpError } from '../../core/errors.js';

/**
 * Resolves `filePath` against `rootDir` and requires the real target (symlinks followed) to be a regular
 * file inside the real root (docs/design/security.md#file-confinement). Throws PATH_NOT_ALLOWED or TRANSPORT_FAILED naming the field.
 */
export async function resolveConfinedPath(rootDir: string, filePath: string, field: string): Promise<string> {
  const root = await realpath(rootDir).catch(() => resolve(rootDir));
  const candidate = resolve(root, filePath);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (cause) {
    const inside = !relative(root, candidate).startsWith('..') && !isAbsolute(relative(root, candidate));
    if (!inside)
      throw new UtcpError('PATH_NOT_ALLOWED', `${field} ${filePath} is outside the client's root directory`, { cause });
    throw new UtcpError('TRANSPORT_FAILED', `${field} ${filePath} does not exist`, { cause });
  }
  const rel = relative(root, real);
  if (rel === '' || rel.startsWith('..' + sep) || rel === '..' || isAbsolute(rel)) {
    throw new UtcpError('PATH_NOT_ALLOWED', `${field} ${filePath} is outside the client's root directory`);
  }
  const info = await stat(real);
  if (!info.isFile()) throw new UtcpError('PATH_NOT_ALLOWED', `${field} ${filePath} is not a regular file`);
  return real;
}

function insideRoot(root: string, real: string): boolean {
  const rel = relative(root, real);
  return rel !== '' && rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel);
}

/**
 * Opens a file confined to `rootDir`, checking the file that was OPENED, not the path before opening
 * (docs/design/threat-model.md#file-race): a directory swapped for a symlink between the check and the
 * open cannot lead outside. On Linux the opened descriptor's real path is read from /proc/self/fd; elsewhere
 * the descriptor's device and inode must match those of the path's real target, which must lie inside the
 * root. FIFOs and devices are opened without blocking and refused. The caller closes the handle.
 */
export async function openConfinedFile(
  rootDir: string,
  filePath: string,
  field: string,
): Promise<{ handle: FileHandle; path: string }> {
  const checked = await resolveConfinedPath(rootDir, filePath, field);
  const root = await realpath(rootDir).catch(() => resolve(rootDir));
  const escaped = () =>
    new UtcpError('PATH_NOT_ALLOWED', `${field} ${filePath} is outside the client's root directory`);
  const handle = await open(checked, constants.O_RDONLY | constants.O_NONBLOCK).catch(
    (cause: NodeJS.ErrnoException) => {
      throw new UtcpError('TRANSPORT_FAILED', `Cannot open ${field} ${filePath}: ${cause.code ?? cause.message}`, {
        cause,
      });
    },
  );
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new UtcpError('PATH_NOT_ALLOWED', `${field} ${filePath} is not a regular file`);
    const opened = await openedPath(handle);
    if (opened !== undefined) {
      if (!insideRoot(root, opened)) throw escaped();
    } else {
      const real = await realpath(checked);
      const again = await stat(real);
      if (!insideRoot(root, real) || again.ino !== info.ino || again.dev !== info.dev) throw escaped();
    }
    return { handle, path: opened ?? checked };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** The real path of an open descriptor (Linux), or undefined where the system cannot tell. */
async function openedPath(handle: FileHandle): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  try {
    return await readlink(`/proc/self/fd/${handle.fd}`);
  } catch {
    return undefined;
  }
}

/** Sync twin of `openConfinedFile` (for parsers that resolve imports synchronously); returns the descriptor. */
export function openConfinedFileSync(realRoot: string, real: string, shown: string): number {
  const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new UtcpError('PATH_NOT_ALLOWED', `${shown} is not a regular file`);
    let opened: string | undefined;
    if (process.platform === 'linux') {
      try {
        opened = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        opened = undefined;
      }
    }
    const ok =
      opened !== undefined
        ? insideRoot(realRoot, opened)
        : (() => {
            const r = realpathSync(real);
            const again = statSync(r);
            return insideRoot(realRoot, r) && again.ino === info.ino && again.dev === info.dev;
          })();
    if (!ok) throw new UtcpError('PATH_NOT_ALLOWED', `${shown} is outside the client's root directory`);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}
