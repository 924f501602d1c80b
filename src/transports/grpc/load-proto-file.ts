import { existsSync, realpathSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Root } from 'protobufjs';
import { UtcpError } from '../../core/errors.js';
import { resolveConfinedPath } from '../shared/confined-path.js';
import type { Protobuf } from './load-grpc.js';

/** Parse options: proto field names kept, comments kept for tool descriptions. */
export const PARSE_OPTIONS = { keepCase: true, alternateCommentMode: true } as const;

function insideRoot(realRoot: string, real: string): boolean {
  const rel = relative(realRoot, real);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

/** Sync twin of resolveConfinedPath for imports (protobufjs resolves them synchronously). */
function confineImport(realRoot: string, candidate: string, shown: string): string {
  let real: string;
  try {
    real = realpathSync(candidate);
  } catch (cause) {
    if (!insideRoot(realRoot, resolve(candidate))) {
      throw new UtcpError(
        'PATH_NOT_ALLOWED',
        `gRPC proto_file import ${shown} is outside the client's root directory`,
        { cause },
      );
    }
    throw new UtcpError('INVALID_MANUAL', `gRPC proto_file import ${shown} does not exist`, { cause });
  }
  if (!insideRoot(realRoot, real))
    throw new UtcpError('PATH_NOT_ALLOWED', `gRPC proto_file import ${shown} is outside the client's root directory`);
  if (!statSync(real).isFile())
    throw new UtcpError('PATH_NOT_ALLOWED', `gRPC proto_file import ${shown} is not a regular file`);
  return real;
}

/** protobufjs ships the `google/protobuf/*.proto` files it does not bundle as JSON (descriptor, api, type, ...). */
function wellKnownProto(target: string): string | undefined {
  if (!/^google\/protobuf\/[a-z_]+\.proto$/.test(target)) return undefined;
  try {
    const dir = dirname(createRequire(import.meta.url).resolve('protobufjs/package.json'));
    const file = join(dir, target);
    return existsSync(file) ? file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The include roots of a proto file, in search order (docs/design/transports.md#grpc-proto-imports): the template's
 * `proto_include_dirs` (relative to `rootDir`, confined to it), then the proto file's directory, then `rootDir`.
 */
async function includeRoots(realRoot: string, main: string, includeDirs: readonly string[]): Promise<string[]> {
  const roots: string[] = [];
  for (const dir of includeDirs) {
    const candidate = resolve(realRoot, dir);
    const outside = () =>
      new UtcpError('PATH_NOT_ALLOWED', `gRPC proto_include_dirs entry ${dir} is outside the client's root directory`);
    let real: string;
    try {
      real = await realpath(candidate);
    } catch (cause) {
      if (candidate !== realRoot && !insideRoot(realRoot, candidate)) throw outside();
      throw new UtcpError('INVALID_MANUAL', `gRPC proto_include_dirs entry ${dir} does not exist`, { cause });
    }
    if (real !== realRoot && !insideRoot(realRoot, real)) throw outside();
    if (!statSync(real).isDirectory())
      throw new UtcpError('INVALID_MANUAL', `gRPC proto_include_dirs entry ${dir} is not a directory`);
    roots.push(real);
  }
  roots.push(dirname(main), realRoot);
  return [...new Set(roots)];
}

/**
 * Loads `protoFile` (relative to `rootDir`) and its imports into a protobufjs Root (docs/design/security.md#file-confinement):
 * every file is realpath-confined to `rootDir`; imports resolve against include roots as protoc's `-I` does
 * (docs/design/transports.md#grpc-proto-imports), and the well-known `google/protobuf/*.proto` files are built in.
 * @throws UtcpError PATH_NOT_ALLOWED (escapes), INVALID_MANUAL (missing or unparsable files).
 */
export async function loadProtoFile(
  protobuf: Protobuf,
  rootDir: string,
  protoFile: string,
  includeDirs: readonly string[] = [],
): Promise<Root> {
  const main = await resolveConfinedPath(rootDir, protoFile, 'gRPC proto_file');
  const realRoot = await realpath(rootDir);
  const roots = await includeRoots(realRoot, main, includeDirs);
  const root = new protobuf.Root();
  let violation: unknown;
  root.resolvePath = (origin: string, target: string) => {
    if (origin === '') return target; // the main file, already confined
    try {
      if (isAbsolute(target)) return confineImport(realRoot, target, target);
      const builtIn = wellKnownProto(target);
      if (builtIn) return builtIn;
      // The first include root that has the file wins, as with protoc; an existing file outside the root is refused.
      for (const dir of roots) {
        const candidate = resolve(dir, target);
        if (existsSync(candidate)) return confineImport(realRoot, candidate, target);
      }
      const shown = roots.map((dir) => relative(realRoot, dir) || '.').join(', ');
      throw new UtcpError(
        'INVALID_MANUAL',
        `gRPC proto_file import ${target} does not exist in the include roots (${shown})`,
      );
    } catch (error) {
      violation ??= error;
      return null as unknown as string; // protobufjs skips the import; the violation is thrown below
    }
  };
  try {
    root.loadSync(main, PARSE_OPTIONS);
  } catch (cause) {
    if (violation) throw violation;
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC proto_file ${protoFile} cannot be parsed: ${(cause as Error).message}`,
      { cause },
    );
  }
  if (violation) throw violation;
  try {
    root.resolveAll();
  } catch (cause) {
    throw new UtcpError(
      'INVALID_MANUAL',
      `gRPC proto_file ${protoFile} has unresolved types: ${(cause as Error).message}`,
      { cause },
    );
  }
  return root;
}
