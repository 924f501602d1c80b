import { realpathSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
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
      throw new UtcpError('PATH_NOT_ALLOWED', `gRPC proto_file import ${shown} is outside the client's root directory`, { cause });
    }
    throw new UtcpError('INVALID_MANUAL', `gRPC proto_file import ${shown} does not exist`, { cause });
  }
  if (!insideRoot(realRoot, real)) throw new UtcpError('PATH_NOT_ALLOWED', `gRPC proto_file import ${shown} is outside the client's root directory`);
  if (!statSync(real).isFile()) throw new UtcpError('PATH_NOT_ALLOWED', `gRPC proto_file import ${shown} is not a regular file`);
  return real;
}

/**
 * Loads `protoFile` (relative to `rootDir`) and its imports into a protobufjs Root (docs/design/security.md#file-confinement):
 * every file is realpath-confined to `rootDir`; imports resolve from the proto file's directory,
 * and the well-known `google/protobuf/*.proto` files come bundled with protobufjs.
 * @throws UtcpError PATH_NOT_ALLOWED (escapes), INVALID_MANUAL (missing or unparsable files).
 */
export async function loadProtoFile(protobuf: Protobuf, rootDir: string, protoFile: string): Promise<Root> {
  const main = await resolveConfinedPath(rootDir, protoFile, 'gRPC proto_file');
  const realRoot = await realpath(rootDir);
  const importDir = dirname(main);
  const root = new protobuf.Root();
  let violation: unknown;
  root.resolvePath = (origin: string, target: string) => {
    if (origin === '') return target; // the main file, already confined
    try {
      return confineImport(realRoot, isAbsolute(target) ? target : resolve(importDir, target), target);
    } catch (error) {
      violation ??= error;
      return null as unknown as string; // protobufjs skips the import; the violation is thrown below
    }
  };
  try {
    root.loadSync(main, PARSE_OPTIONS);
  } catch (cause) {
    if (violation) throw violation;
    throw new UtcpError('INVALID_MANUAL', `gRPC proto_file ${protoFile} cannot be parsed: ${(cause as Error).message}`, { cause });
  }
  if (violation) throw violation;
  try {
    root.resolveAll();
  } catch (cause) {
    throw new UtcpError('INVALID_MANUAL', `gRPC proto_file ${protoFile} has unresolved types: ${(cause as Error).message}`, { cause });
  }
  return root;
}
