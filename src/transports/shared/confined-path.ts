import { realpath, stat } from 'node:fs/promises';
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
    if (!inside) throw new UtcpError('PATH_NOT_ALLOWED', `${field} ${filePath} is outside the client's root directory`, { cause });
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
