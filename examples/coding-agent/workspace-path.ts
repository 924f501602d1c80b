import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A path outside the workspace, or otherwise refused. */
export class WorkspacePathError extends Error {
  override name = 'WorkspacePathError';
}

function inside(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

async function isSymlink(path: string): Promise<boolean> {
  return lstat(path).then((s) => s.isSymbolicLink(), () => false);
}

/** For a path that does not exist yet: the real path of its deepest existing ancestor plus the missing rest. */
async function resolveMissing(rootReal: string, candidate: string, userPath: string): Promise<string> {
  let existing = candidate;
  const rest: string[] = [];
  for (;;) {
    const parent = dirname(existing);
    if (parent === existing) throw new WorkspacePathError(`path ${userPath} cannot be resolved`);
    rest.unshift(basename(existing));
    existing = parent;
    let real: string;
    try {
      real = await realpath(existing);
    } catch (error) {
      if (!isMissing(error)) throw error;
      if (await isSymlink(existing)) throw new WorkspacePathError(`path ${userPath} goes through a broken symbolic link`);
      continue;
    }
    if (!inside(rootReal, real)) throw new WorkspacePathError(`path ${userPath} leads outside the workspace through a symbolic link`);
    return join(real, ...rest);
  }
}

/**
 * Resolves a model-supplied path inside the workspace root (given as a real path) and returns an absolute
 * real path. Refuses `..` segments, absolute paths outside the root, and symbolic links (at any level) whose
 * target leaves the root or is missing. A path that does not exist yet is checked through its deepest
 * existing ancestor.
 * @throws WorkspacePathError
 */
export async function resolveWorkspacePath(rootReal: string, userPath: unknown): Promise<string> {
  if (typeof userPath !== 'string' || userPath.trim() === '') throw new WorkspacePathError('path must be a non-empty string');
  if (userPath.includes('\0')) throw new WorkspacePathError('path must not contain NUL characters');
  if (userPath.split(/[\\/]+/).includes('..')) throw new WorkspacePathError(`path ${userPath} must not contain ".." segments`);
  const candidate = resolve(rootReal, userPath);
  if (!inside(rootReal, candidate)) throw new WorkspacePathError(`path ${userPath} is outside the workspace`);
  let real: string;
  try {
    real = await realpath(candidate);
  } catch (error) {
    if (!isMissing(error)) throw error;
    // Creating the file would follow a dangling link wherever it points.
    if (await isSymlink(candidate)) throw new WorkspacePathError(`path ${userPath} is a symbolic link to a missing target`);
    return resolveMissing(rootReal, candidate, userPath);
  }
  if (!inside(rootReal, real)) throw new WorkspacePathError(`path ${userPath} leads outside the workspace through a symbolic link`);
  return real;
}

/** A workspace-relative display form (forward slashes) of a resolved path. */
export function displayPath(rootReal: string, real: string): string {
  return relative(rootReal, real).split(sep).join('/') || '.';
}
