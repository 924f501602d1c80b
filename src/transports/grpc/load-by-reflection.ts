import type { Client, Metadata } from '@grpc/grpc-js';
import type * as ProtobufJs from 'protobufjs';
import type { Root, Type } from 'protobufjs';
import { UtcpError } from '../../core/errors.js';
import { embeddedRoot } from './embedded-root.js';
import { reflectionProto } from './embedded-protos.js';
import { bidiExchange } from './grpc-call.js';
import { GrpcError } from './grpc-error.js';
import type { GrpcModules } from './load-grpc.js';

export interface ReflectionOptions {
  client: Client;
  metadata: Metadata;
  timeoutMs: number;
  signal: AbortSignal;
  /** Total descriptor bytes accepted. */
  maxBytes: number;
  what: string;
  callerTimeoutMs?: number;
}

interface FileDescriptor {
  name: string;
  dependency?: string[];
}

const PACKAGES = ['grpc.reflection.v1', 'grpc.reflection.v1alpha'] as const;
/** Bounds the number of files fetched (a misbehaving server could otherwise name dependencies forever). */
const MAX_FILES = 1_000;

/**
 * Fetches the descriptors of `serviceName` by server reflection (docs/design/transports.md#grpc): `v1`, then
 * `v1alpha` when the server answers UNIMPLEMENTED; `file_containing_symbol`, then `file_by_filename`
 * for each missing dependency. Well-known google/protobuf files the server does not serve come bundled.
 * @throws GrpcError (reflection failed), UtcpError INVALID_MANUAL (service not found), RESPONSE_TOO_LARGE.
 */
export async function loadByReflection(
  mods: GrpcModules,
  serviceName: string,
  options: ReflectionOptions,
): Promise<Root> {
  let lastError: unknown;
  for (const pkg of PACKAGES) {
    try {
      return await reflect(mods, pkg, serviceName, options);
    } catch (error) {
      if (error instanceof GrpcError && error.grpcCode === mods.grpc.status.UNIMPLEMENTED) {
        lastError = error;
        continue;
      }
      throw error;
    }
  }
  throw new UtcpError(
    'NOT_SUPPORTED',
    `${options.what}: the server does not offer gRPC reflection; set proto_file instead`,
    { cause: lastError },
  );
}

async function reflect(
  mods: GrpcModules,
  pkg: (typeof PACKAGES)[number],
  serviceName: string,
  options: ReflectionOptions,
): Promise<Root> {
  const { protobuf, descriptor } = mods;
  const proto = embeddedRoot(protobuf, reflectionProto(pkg));
  const requestType = proto.lookupType(`${pkg}.ServerReflectionRequest`);
  const responseType = proto.lookupType(`${pkg}.ServerReflectionResponse`);
  const exchange = bidiExchange({
    grpc: mods.grpc,
    client: options.client,
    path: `/${pkg}.ServerReflection/ServerReflectionInfo`,
    metadata: options.metadata,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    maxMessageBytes: options.maxBytes,
    what: options.what,
    callerTimeoutMs: options.callerTimeoutMs,
  });
  const files = new Map<string, FileDescriptor>();
  const unavailable = new Set<string>();
  const requested = new Set<string>();
  let totalBytes = 0;

  const ask = async (
    request: Record<string, string>,
  ): Promise<{ error?: { error_code: number; error_message: string }; files: Uint8Array[] }> => {
    const encoded = encode(requestType, request);
    const raw = await exchange.ask(encoded);
    totalBytes += raw.length;
    if (totalBytes > options.maxBytes) {
      throw new UtcpError(
        'RESPONSE_TOO_LARGE',
        `${options.what}: reflection descriptors exceed the ${options.maxBytes}-byte limit`,
      );
    }
    const response = responseType.toObject(responseType.decode(raw), { oneofs: true, defaults: false }) as {
      error_response?: { error_code: number; error_message: string };
      file_descriptor_response?: { file_descriptor_proto?: Uint8Array[] };
    };
    return { error: response.error_response, files: response.file_descriptor_response?.file_descriptor_proto ?? [] };
  };
  const addFiles = (list: Uint8Array[]) => {
    for (const bytes of list) {
      const file = descriptor.FileDescriptorProto.decode(bytes) as unknown as FileDescriptor;
      if (!files.has(file.name)) files.set(file.name, file);
    }
  };

  try {
    const first = await ask({ file_containing_symbol: serviceName });
    if (first.error) {
      throw new UtcpError(
        'INVALID_MANUAL',
        `${options.what}: the server does not know service ${serviceName} (${first.error.error_message || `reflection error ${first.error.error_code}`})`,
      );
    }
    addFiles(first.files);
    for (;;) {
      const missing = new Set(
        [...files.values()].flatMap((f) => f.dependency ?? []).filter((d) => !files.has(d) && !requested.has(d)),
      );
      if (missing.size === 0) break;
      if (requested.size + missing.size > MAX_FILES)
        throw new UtcpError('PROTOCOL_ERROR', `${options.what}: reflection named more than ${MAX_FILES} files`);
      for (const name of missing) {
        requested.add(name);
        const answer = await ask({ file_by_filename: name });
        if (!answer.error) addFiles(answer.files);
        if (!files.has(name)) unavailable.add(name);
      }
    }
  } finally {
    exchange.end();
  }

  const set: FileDescriptor[] = [...files.values()];
  for (const name of unavailable) {
    const bundled = (protobuf.common as unknown as { get(file: string): ProtobufJs.INamespace | null }).get(name);
    if (!bundled)
      throw new UtcpError(
        'INVALID_MANUAL',
        `${options.what}: the server did not provide ${name}, a dependency of ${serviceName}`,
      );
    set.push(
      ...(
        protobuf.Root.fromJSON(bundled) as unknown as { toDescriptor(syntax: string): { file: FileDescriptor[] } }
      ).toDescriptor('proto3').file,
    );
  }
  let root: Root;
  try {
    root = (protobuf.Root as unknown as { fromDescriptor(set: { file: FileDescriptor[] }): Root }).fromDescriptor({
      file: set,
    });
  } catch (cause) {
    throw new UtcpError(
      'INVALID_MANUAL',
      `${options.what}: the reflected descriptors of ${serviceName} do not resolve: ${(cause as Error).message}`,
      { cause },
    );
  }
  return root;
}

function encode(type: Type, value: Record<string, unknown>): Buffer {
  const bytes = type.encode(type.fromObject(value)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
