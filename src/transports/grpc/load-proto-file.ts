import { closeSync, existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { Root } from 'protobufjs';
import { UtcpError } from '../../core/errors.js';
import { openConfinedFileSync, resolveConfinedPath } from '../shared/confined-path.js';
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

/** Import nesting deeper than this is refused (protobufjs's own recursion limit). */
const MAX_IMPORT_DEPTH = 100;

/**
 * The text of one proto file, read from a descriptor that was checked AFTER it was opened
 * (docs/design/threat-model.md#file-race): a directory swapped for a symlink between resolving a path and
 * opening it cannot lead outside `realRoot`. Built-in well-known files (inside protobufjs) are read as they are.
 */
function readConfined(realRoot: string, file: string, shown: string, builtIn: ReadonlySet<string>): string {
  if (builtIn.has(file)) return readFileSync(file, 'utf8');
  let fd: number;
  try {
    fd = openConfinedFileSync(realRoot, file, shown);
  } catch (cause) {
    if (cause instanceof UtcpError) throw cause;
    throw new UtcpError(
      'INVALID_MANUAL',
      `${shown} cannot be read (${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message})`,
      { cause },
    );
  }
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * Loads `protoFile` (relative to `rootDir`) and its imports into a protobufjs Root (docs/design/security.md#file-confinement):
 * every file is confined to `rootDir` by checking the descriptor it was read from (not the path before opening);
 * imports resolve against include roots as protoc's `-I` does (docs/design/transports.md#grpc-proto-imports), and the
 * well-known `google/protobuf/*.proto` files are built in. The import walk is ours (protobufjs's loader would
 * open files by path itself): each file is read, parsed into the root, and its imports followed, once each.
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
  const builtIn = new Set<string>();
  /** Where an import resolves: a bundled definition's name, or a (realpath) file inside the root. */
  const resolveImport = (target: string): string => {
    const bundled = bundledName(protobuf, target);
    if (bundled) return bundled;
    if (isAbsolute(target)) return confineImport(realRoot, target, target);
    const wellKnown = wellKnownProto(target);
    if (wellKnown) {
      builtIn.add(wellKnown);
      return wellKnown;
    }
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
  };
  const seen = new Set<string>();
  const pending: Array<{ file: string; shown: string; weak: boolean; depth: number }> = [
    { file: main, shown: `gRPC proto_file ${protoFile}`, weak: false, depth: 0 },
  ];
  for (let next = pending.shift(); next; next = pending.shift()) {
    const { file, shown, weak, depth } = next;
    if (seen.has(file)) continue;
    seen.add(file);
    if (depth > MAX_IMPORT_DEPTH)
      throw new UtcpError(
        'INVALID_MANUAL',
        `gRPC proto_file ${protoFile} nests imports deeper than ${MAX_IMPORT_DEPTH}`,
      );
    const bundled = protobuf.common.get(file) as { options?: Record<string, unknown>; nested?: object } | null;
    if (bundled) {
      root.setOptions(bundled.options ?? {});
      root.addJSON((bundled.nested ?? {}) as Record<string, never>);
      continue;
    }
    let source: string;
    try {
      source = readConfined(realRoot, file, shown, builtIn);
    } catch (error) {
      if (weak && !(error instanceof UtcpError && error.code === 'PATH_NOT_ALLOWED')) continue;
      throw error;
    }
    let parsed: { imports?: string[]; weakImports?: string[] };
    try {
      parsed = protobuf.parse(source, root, PARSE_OPTIONS);
    } catch (cause) {
      throw new UtcpError('INVALID_MANUAL', `${shown} cannot be parsed: ${(cause as Error).message}`, { cause });
    }
    root.files.push(file);
    for (const [list, isWeak] of [
      [parsed.imports ?? [], false],
      [parsed.weakImports ?? [], true],
    ] as const) {
      for (const target of list)
        pending.push({
          file: resolveImport(target),
          shown: `gRPC proto_file import ${target}`,
          weak: isWeak,
          depth: depth + 1,
        });
    }
  }
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

/** protobufjs's name for a bundled `google/protobuf/*.proto` definition (kept as JSON inside the library). */
function bundledName(protobuf: Protobuf, target: string): string | undefined {
  const at = target.lastIndexOf('google/protobuf/');
  if (at < 0) return undefined;
  const name = target.slice(at);
  return protobuf.common.get(name) ? name : undefined;
}
